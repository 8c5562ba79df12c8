import type { StandardSchemaV1 } from "@standard-schema/spec";
import { InvalidInputError } from "@perdure/engine";
import type { ToolTaskCancellation, ToolTaskPoll, ToolTaskPollOutcome } from "../contract/agent-framework-runner.ts";
import type { AgentEventWriter } from "../contract/values/agent-event.ts";
import type { QuestionAnswer } from "../contract/values/agent-tool-call.ts";
import { isToolEffect, type ToolEffect } from "../contract/values/tool-effect.ts";
import type { JsonSchema } from "./model-client.ts";
import { isStandardSchema, standardSchemaToJsonSchema } from "./standard-schema-arguments.ts";
import { checkToolParametersSchema } from "./tool-parameters-check.ts";

/** What a function tool's `execute` gets besides its arguments. */
export interface ToolCallContext {
  flowId: string;
  turnId: string;
  toolCallId: string;
  /** `<flowId>/<turnId>/<toolCallId>`, the same on every attempt: pass it to the system you write to. */
  idempotencyKey: string;
  attempt: number;
  events: AgentEventWriter;
  heartbeat: () => Promise<void>;
  /** What an earlier attempt saved with `saveHeartbeatCheckpoint`, if anything. */
  heartbeatCheckpoint: string | undefined;
  saveHeartbeatCheckpoint: (text: string) => Promise<void>;
  signal: AbortSignal;
  deadline: Date;
  /** The answers to this call's own questions, oldest first; empty on the first run. */
  inputAnswers: QuestionAnswer[];
  /** The `continuation` of the question answered last, or undefined. */
  inputContinuation: string | undefined;
}

/**
 * A tool's own approval: a flag, or a function of the call's arguments (as
 * the model sent them, parsed from JSON) that decides per call.
 */
export type ToolApprovalSetting = boolean | ((argumentsValue: Record<string, unknown>, context: { toolCallId: string }) => boolean | PromiseLike<boolean>);

/** A tool the Stepwise loop offers the model and runs in its own Step. */
export interface FunctionTool<TArguments = Record<string, unknown>> {
  readonly kind: "function_tool";
  readonly name: string;
  readonly description: string;
  /** The JSON Schema the model is offered: the one given, or the one generated from `argumentsSchema`. */
  readonly parameters: JsonSchema;
  /**
   * The Standard Schema the tool was declared with, which checks the
   * arguments instead of `parameters`; undefined for a JSON Schema tool.
   */
  readonly argumentsSchema: StandardSchemaV1 | undefined;
  /** @default the agent's `defaultToolEffect` */
  readonly effect: ToolEffect | undefined;
  /**
   * Whether a call asks for approval: a flag, or a function of the call's
   * arguments that `RunModel` evaluates for each call (a throwing function
   * asks).
   * @default by effect: false for `read` and `idempotent_write`, true otherwise
   */
  readonly requiresApproval: ToolApprovalSetting | undefined;
  /**
   * A string result is the output, and a `ToolInputRequested` asks the user
   * first (return it only before the tool takes any effect); any other
   * result is sent as JSON with Python's `json.dumps` separators.
   */
  readonly execute: (argumentsValue: TArguments, context: ToolCallContext) => unknown;
  /**
   * Polls a task `execute` started by returning `ToolTaskStarted`; a tool
   * without it cannot start tasks.
   * @default none
   */
  readonly pollTask: ((poll: ToolTaskPoll) => Promise<ToolTaskPollOutcome>) | undefined;
  /** Stops an abandoned task best-effort, idempotent by `taskId`. @default none */
  readonly cancelTask: ((cancellation: ToolTaskCancellation) => Promise<void>) | undefined;
  /** True for an `agentTool`: each call starts a sub-agent session and counts toward `maxSubAgentsPerTurn`. @default false */
  readonly startsSubAgent?: boolean;
}

/** What {@link functionTool} takes. */
export interface FunctionToolSpec<TArguments, TParameters extends JsonSchema | StandardSchemaV1 = JsonSchema> {
  name: string;
  description: string;
  /**
   * The arguments, checked before `execute` runs: a JSON Schema object whose
   * root is `{ "type": "object" }`, or a Standard Schema (zod 4, arktype,
   * valibot wrapped in `toStandardJsonSchema`) whose library converts it to
   * the JSON Schema the model is offered.
   */
  parameters: TParameters;
  effect?: ToolEffect;
  /**
   * A flag, or a function of the call's arguments, evaluated per call before
   * the call is recorded. The session's `toolPolicies` pick the effect; the
   * stricter approval wins unless a policy says `requiresApproval: false`.
   * @default by effect
   */
  requiresApproval?: ToolApprovalSetting;
  execute: (argumentsValue: TArguments, context: ToolCallContext) => unknown;
  /** Polls a task `execute` started (`ToolTaskStarted`). @default none */
  pollTask?: (poll: ToolTaskPoll) => Promise<ToolTaskPollOutcome>;
  /** Stops an abandoned task best-effort. @default none */
  cancelTask?: (cancellation: ToolTaskCancellation) => Promise<void>;
}

const toolNamePattern = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Declares a function tool. `parameters` is a Standard Schema, from which
 * `execute`'s argument type is inferred and the model's JSON Schema is
 * generated, or a JSON Schema object with the argument type as the generic.
 * Either is checked here, so a bad schema fails when the tool is built.
 *
 * @example
 * import { z } from "zod";
 * const lookupOrder = functionTool({
 *   name: "lookup_order",
 *   description: "Look up an order by its ID.",
 *   parameters: z.object({ order_id: z.string() }),
 *   effect: "read",
 *   execute: async ({ order_id }) => orders.get(order_id),
 * });
 *
 * @example
 * const lookupOrder = functionTool<{ order_id: string }>({
 *   name: "lookup_order",
 *   description: "Look up an order by its ID.",
 *   parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
 *   effect: "read",
 *   execute: async ({ order_id }) => orders.get(order_id),
 * });
 */
export function functionTool<TSchema extends StandardSchemaV1>(spec: FunctionToolSpec<StandardSchemaV1.InferOutput<TSchema>, TSchema>): FunctionTool<StandardSchemaV1.InferOutput<TSchema>>;
export function functionTool<TArguments = Record<string, unknown>>(spec: FunctionToolSpec<TArguments>): FunctionTool<TArguments>;
export function functionTool(spec: FunctionToolSpec<unknown, JsonSchema | StandardSchemaV1>): FunctionTool<unknown> {
  if (typeof spec.name !== "string" || !toolNamePattern.test(spec.name)) {
    throw new InvalidInputError(`tool name ${JSON.stringify(spec.name)} is invalid: use 1 to 128 letters, digits, "_" or "-"`);
  }
  if (typeof spec.execute !== "function") throw new InvalidInputError(`tool ${spec.name} has no execute function`);
  if (spec.requiresApproval !== undefined && typeof spec.requiresApproval !== "boolean" && typeof spec.requiresApproval !== "function") {
    throw new InvalidInputError(`tool ${spec.name} requiresApproval ${JSON.stringify(spec.requiresApproval)} is invalid: use true, false or a function of the call's arguments`);
  }
  if (spec.effect !== undefined && !isToolEffect(spec.effect)) {
    throw new InvalidInputError(`tool ${spec.name} effect ${JSON.stringify(spec.effect)} is invalid: use read, idempotent_write, non_idempotent_write or unclassified`);
  }
  const argumentsSchema = isStandardSchema(spec.parameters) ? spec.parameters : undefined;
  if (argumentsSchema === undefined && (typeof spec.parameters !== "object" || spec.parameters === null || Array.isArray(spec.parameters))) {
    throw new InvalidInputError(`tool ${spec.name} parameters must be a JSON Schema object or a Standard Schema (such as zod's z.object)`);
  }
  const parameters = argumentsSchema === undefined ? spec.parameters as JsonSchema : standardSchemaToJsonSchema(spec.name, argumentsSchema);
  checkToolParametersSchema(spec.name, parameters);
  return Object.freeze({
    kind: "function_tool",
    name: spec.name,
    description: spec.description ?? "",
    parameters,
    argumentsSchema,
    effect: spec.effect,
    requiresApproval: spec.requiresApproval,
    execute: spec.execute,
    pollTask: spec.pollTask,
    cancelTask: spec.cancelTask,
  });
}
