import { InvalidInputError } from "@perdure/engine";
import { builtInToolNames, isBuiltInToolName, type BuiltInToolName } from "../contract/built-in-tool-definitions.ts";
import type { AgentPlan } from "../contract/values/agent-plan.ts";
import type { InteractionMode } from "../contract/values/agent-state.ts";
import type { SessionSettings } from "../contract/values/session-settings.ts";
import type { CompactionPolicy } from "../session/session-options.ts";
import type { AgentTracingOptions } from "../tracing/agent-tracing-options.ts";
import { isToolEffect, type ToolEffect, type ToolPolicy } from "../contract/values/tool-effect.ts";
import type { FunctionTool } from "./function-tool.ts";
import type { ModelClient, ModelSettings } from "./model-client.ts";
import type { ToolSource } from "./tool-source.ts";

/** What an instructions function gets, evaluated in every `RunModel`. */
export interface InstructionContext {
  flowId: string;
  turnId: string;
  attempt: number;
  interactionMode: InteractionMode;
  /** The session's plan, or null before `write_todos` first succeeds. */
  plan: AgentPlan | null;
  /** The settings the turn started with, `{}` when there are none. */
  sessionSettings: SessionSettings;
}

/** A Stepwise agent. */
export interface AgentDefinition {
  name: string;
  /** A string, or a function evaluated in every `RunModel`, so a deploy changes the next model call. */
  instructions: string | ((context: InstructionContext) => string | Promise<string>);
  model: ModelClient;
  /**
   * Picks the `ModelClient` of each model call, summary call and token
   * estimate from the turn's session settings. Return only clients the
   * Worker built; the settings come from the application. An error it
   * throws fails the model call, and after the retries the turn, with the
   * error as `lastTurnError`: keep the settings out of its message.
   * @default none: always `model`
   */
  resolveModel?: (settings: SessionSettings) => ModelClient;
  /**
   * The names `resolveModel` accepts as `settings.model`, the default first,
   * for a per-session model picker such as `perdure dev`'s. When given, a
   * `settings.model` outside them gets `model` and never reaches
   * `resolveModel`, and `perdure dev` refuses it with a 400. A Perdure extension.
   * @default []
   */
  modelChoices?: readonly string[];
  /**
   * Summarize older messages before a model call whose input nears the
   * context window; passed to the session options.
   * @default none
   */
  compaction?: CompactionPolicy | null;
  /** Passed to the model unchanged. @default none */
  modelSettings?: ModelSettings;
  /** @default [] */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own argument type
  tools?: readonly FunctionTool<any>[];
  /** Listed in every `RunModel`. @default [] */
  toolSources?: readonly ToolSource[];
  /** Override a function tool's own effect and approval. @default {} */
  toolPolicies?: Readonly<Record<string, ToolPolicy>>;
  /** Effect of a tool that declares none. @default "unclassified" */
  defaultToolEffect?: ToolEffect;
  /** Built-in tools the model sees and the session handles: `"ask_user"`, `"durable_wait"`, `"write_todos"`. @default [] */
  builtInTools?: readonly BuiltInToolName[];
  /** Accept `planMode` user messages; needs `"write_todos"` in `builtInTools`. @default false */
  planModeEnabled?: boolean;
  /**
   * `"auto"`: a planning turn offers only `write_todos` and the model may
   * answer in text instead. `"required"`: the first model call of a planning
   * turn must call `write_todos` while no draft exists; the provider and
   * model must accept a forced tool choice.
   * @default "auto"
   */
  planningToolChoice?: "auto" | "required";
  /** Passed to the session options. @default 31_536_000_000 (365 days) */
  maxDurableWaitMs?: number;
  /** After this many model calls in one turn, the next call offers no tools. @default 100 */
  maxModelCallsPerTurn?: number;
  /** Longest wait for one source's `listTools`. @default 10_000 */
  toolSourceListingTimeoutMs?: number;
  /** Passed to the session options. @default none */
  interruptDeadlineMs?: number | null;
  /** Most `agentTool` calls one turn may make; passed to the session options. @default 10 */
  maxSubAgentsPerTurn?: number;
  /** Passed to the session options. @default 10_485_760 */
  eventStreamCapacityBytes?: number;
  /**
   * OpenTelemetry spans of the session; passed to the session options. A
   * Perdure extension: the contract's definition has no tracing field.
   * @default tracing on, with the global tracer provider
   */
  tracing?: AgentTracingOptions;
  /**
   * Passed to the session options, like the three below: the most messages
   * the `AgentMessages` window holds. A Perdure extension: the contract's
   * definition lists no message storage fields.
   * @default 64
   */
  messageWindowSize?: number;
  /** Passed to the session options: the most messages per archive chunk. @default 32 */
  messageChunkSize?: number;
  /** Passed to the session options: the most bytes per archive chunk, 1 to 8,388,608. @default 1_048_576 (1 MiB) */
  messageChunkMaxBytes?: number;
  /** Passed to the session options: with `compaction`, the stored messages retention always keeps; `null` keeps every message. @default 1_000 */
  retainedMessageLimit?: number | null;
}

export interface ResolvedAgentDefinition {
  name: string;
  instructions: AgentDefinition["instructions"];
  model: ModelClient;
  resolveModel: ((settings: SessionSettings) => ModelClient) | undefined;
  modelChoices: readonly string[];
  modelSettings: ModelSettings | undefined;
  tools: ReadonlyMap<string, FunctionTool>;
  toolSources: ReadonlyMap<string, ToolSource>;
  toolPolicies: Readonly<Record<string, ToolPolicy>>;
  defaultToolEffect: ToolEffect;
  maxModelCallsPerTurn: number;
  toolSourceListingTimeoutMs: number;
  builtInTools: readonly BuiltInToolName[];
  planModeEnabled: boolean;
  planningToolChoice: "auto" | "required";
}

function resolveBuiltInTools(agentName: string, value: unknown): readonly BuiltInToolName[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every(isBuiltInToolName)) {
    throw new InvalidInputError(`agent ${agentName} builtInTools ${JSON.stringify(value)} is invalid: use a list of ${builtInToolNames.join(", ")}`);
  }
  return builtInToolNames.filter((name) => (value as readonly string[]).includes(name));
}

/** Validates a definition and fills in every default (written once, here and in the TSDoc above). */
export function resolveAgentDefinition(definition: AgentDefinition): ResolvedAgentDefinition {
  if (typeof definition?.name !== "string" || definition.name === "") throw new InvalidInputError(`agent name ${JSON.stringify(definition?.name)} is invalid: give a non-empty string`);
  if (typeof definition.instructions !== "string" && typeof definition.instructions !== "function") {
    throw new InvalidInputError(`agent ${definition.name} instructions must be a string or a function`);
  }
  if (typeof definition.model?.call !== "function") throw new InvalidInputError(`agent ${definition.name} model must be a ModelClient (an object with call(request))`);
  if (definition.resolveModel !== undefined && typeof definition.resolveModel !== "function") {
    throw new InvalidInputError(`agent ${definition.name} resolveModel must be a function of the session settings that returns a ModelClient`);
  }
  const modelChoices: readonly unknown[] = definition.modelChoices ?? [];
  if (!Array.isArray(modelChoices) || !modelChoices.every((name) => typeof name === "string" && name !== "")) {
    throw new InvalidInputError(`agent ${definition.name} modelChoices ${JSON.stringify(definition.modelChoices)} is invalid: use a list of model names`);
  }
  if (modelChoices.length > 0 && definition.resolveModel === undefined) {
    throw new InvalidInputError(`agent ${definition.name} has modelChoices but no resolveModel to pick among them`);
  }
  const tools = new Map<string, FunctionTool>();
  for (const tool of definition.tools ?? []) {
    if (tool?.kind !== "function_tool") throw new InvalidInputError(`agent ${definition.name} tools must be made with functionTool`);
    if (tools.has(tool.name)) throw new InvalidInputError(`agent ${definition.name} has two tools named ${tool.name}`);
    tools.set(tool.name, tool as FunctionTool);
  }
  const toolSources = new Map<string, ToolSource>();
  const declaredNames = new Set<string>();
  for (const source of definition.toolSources ?? []) {
    if (typeof source?.sourceName !== "string" || source.sourceName === "") throw new InvalidInputError(`agent ${definition.name} has a tool source without a sourceName`);
    if (toolSources.has(source.sourceName)) throw new InvalidInputError(`agent ${definition.name} has two tool sources named ${source.sourceName}; give each a unique sourceName`);
    for (const name of source.declaredToolNames?.() ?? []) {
      if (tools.has(name)) throw new TypeError(`tool ${name} of a tool source uses the name of a function tool`);
      if (declaredNames.has(name)) throw new TypeError(`two tool sources list a tool named ${name}`);
      declaredNames.add(name);
    }
    toolSources.set(source.sourceName, source);
  }
  const builtInTools = resolveBuiltInTools(definition.name, definition.builtInTools);
  for (const name of builtInTools) {
    if (tools.has(name) || declaredNames.has(name)) throw new InvalidInputError(`tool ${name} uses the name of an enabled built-in tool`);
  }
  const planModeEnabled = definition.planModeEnabled ?? false;
  if (typeof planModeEnabled !== "boolean") throw new InvalidInputError(`agent ${definition.name} planModeEnabled ${JSON.stringify(planModeEnabled)} is invalid: use true or false`);
  if (planModeEnabled && !builtInTools.includes("write_todos")) {
    throw new InvalidInputError(`agent ${definition.name} has planModeEnabled, which needs "write_todos" in builtInTools`);
  }
  const planningToolChoice = definition.planningToolChoice ?? "auto";
  if (planningToolChoice !== "auto" && planningToolChoice !== "required") {
    throw new InvalidInputError(`agent ${definition.name} planningToolChoice ${JSON.stringify(planningToolChoice)} is invalid: use "auto" or "required"`);
  }
  const defaultToolEffect = definition.defaultToolEffect ?? "unclassified";
  if (!isToolEffect(defaultToolEffect)) throw new InvalidInputError(`defaultToolEffect ${JSON.stringify(defaultToolEffect)} is invalid`);
  const maxModelCallsPerTurn = definition.maxModelCallsPerTurn ?? 100;
  if (!Number.isSafeInteger(maxModelCallsPerTurn) || maxModelCallsPerTurn < 1) {
    throw new InvalidInputError(`maxModelCallsPerTurn ${String(definition.maxModelCallsPerTurn)} is invalid: use a positive integer`);
  }
  const toolSourceListingTimeoutMs = definition.toolSourceListingTimeoutMs ?? 10_000;
  if (!Number.isFinite(toolSourceListingTimeoutMs) || toolSourceListingTimeoutMs <= 0) {
    throw new InvalidInputError(`toolSourceListingTimeoutMs ${String(definition.toolSourceListingTimeoutMs)} is invalid: use a positive number`);
  }
  return {
    name: definition.name,
    instructions: definition.instructions,
    model: definition.model,
    resolveModel: definition.resolveModel,
    modelChoices: modelChoices.map(String),
    modelSettings: definition.modelSettings,
    tools,
    toolSources,
    toolPolicies: definition.toolPolicies ?? {},
    defaultToolEffect,
    maxModelCallsPerTurn,
    toolSourceListingTimeoutMs,
    builtInTools,
    planModeEnabled,
    planningToolChoice,
  };
}
