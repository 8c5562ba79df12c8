/**
 * The framework-neutral side of the runner conformance tests: one scripted
 * model and four tools, written once. An adapter's subject turns them into
 * its framework's own model and tools (a `MockLanguageModelV4`, a scripted
 * `Model`, Stepwise's `ScriptedModelClient`), so every runner is asserted on
 * the same conversations. The script reads only what a prompt holds (the
 * latest user text and the tool results after it), so a rerun model call
 * gets the same reply in any process.
 */
import { join } from "node:path";
import type { BuiltInToolName } from "../../contract/built-in-tool-definitions.ts";
import type { ToolEffect } from "../../contract/values/tool-effect.ts";
import { FileGate } from "../file-gate.ts";
import { InvocationLog } from "../invocation-log.ts";

/** What the model of a conformance test reads from its prompt. */
export interface ConformanceModelInput {
  /** The text of the latest user message. */
  lastUserText: string;
  /** The tool results after the latest user message, oldest first. */
  turnToolResults: readonly { toolName: string; output: string }[];
  /** The model call's abort signal, when the framework passes one. */
  signal?: AbortSignal;
}

/** One model reply: a final text, or one tool call. A failing model call throws instead. */
export type ConformanceModelReply =
  | { kind: "text"; text: string }
  | { kind: "tool_call"; toolName: string; arguments: Record<string, unknown> };

/** The scripted model. The subject's framework model calls `reply` once per model call. */
export interface ConformanceModel {
  reply(input: ConformanceModelInput): Promise<ConformanceModelReply>;
}

/** A tool of the conformance tests, to wrap as the framework's own schema-only tool. */
export interface ConformanceTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  effect: ToolEffect;
  /**
   * The framework's own approval of the tool, which the subject sets in its
   * framework's terms (an AI SDK or OpenAI Agents SDK tool's
   * `needsApproval`, a Mastra tool's `requireApproval`, a Stepwise function
   * tool's `requiresApproval`): a flag, or a function of the call's
   * arguments that decides per call. The session's policy names only the
   * effect, so the framework's approval must hold.
   * @default none
   */
  frameworkApproval?: boolean | ((argumentsValue: Record<string, unknown>) => boolean);
  /** Runs the tool; the subject passes the idempotency key its framework hands to tools. */
  execute(argumentsValue: Record<string, unknown>, context: { idempotencyKey: string }): Promise<string>;
}

/** Everything a subject needs to build its session Flow. */
export interface RunnerConformanceSetup {
  /** The Flow type to register. */
  flowType: string;
  instructions: string;
  model: ConformanceModel;
  tools: readonly ConformanceTool[];
  /** Built-in tools the session must enable (`builtInTools`). */
  builtInTools: readonly BuiltInToolName[];
  /**
   * When true, the subject also sets its framework's own option that would
   * run `refund_order` (a `non_idempotent_write`) without its approval or
   * outside its tool Step: the subject's `inlineWriteOption`. The flow must
   * then refuse the option when it is built, or keep the write's approval
   * and its Step.
   * @default false
   */
  inlineWriteOption?: boolean;
}

/** The Flow type every subject registers. */
export const conformanceFlowType = "RunnerConformance";

/** The user texts that drive each conversation. */
export const conformanceUserTexts = {
  readTool: "Where is order 7?",
  approvedWrite: "Refund order 8.",
  rejectedWrite: "Refund order 12.",
  askUser: "Which size should I order?",
  failingModel: "Fail, please.",
  afterFailure: "Are you back?",
  parkedModelCall: "Where is order 9? Take your time.",
  parkedWrite: "Refund order 10 slowly.",
  perCallApprovalAsks: "Cancel order 1001.",
  perCallApprovalSkips: "Cancel order 1002.",
  frameworkApprovalKept: "Reset the password of order 15.",
  throwingWrite: "Charge order 13.",
  parkedThrowingWrite: "Charge order 14 slowly.",
} as const;

/** The error every `charge_order` call throws once it has run. */
export const conformanceToolFailure = "upstream 503";

/** The FileGates the script parks at, in the test's folder. */
export const conformanceGateNames = {
  modelCall: "conformance-model-call",
  singleAttemptTool: "conformance-single-attempt-tool",
  throwingWrite: "conformance-throwing-write",
} as const;

/** The error of every model call for `conformanceUserTexts.failingModel`. */
export const conformanceModelFailure = "the scripted model is unavailable";

/** The question `ask_user` asks, with its choices. */
export const conformanceQuestion = { question: "Which size do you want?", choices: ["S", "M", "L"] } as const;

/** The InvocationLog of a conformance test: every model call (`model_call`) and every tool run (by tool name). */
export function conformanceLog(directory: string): InvocationLog {
  return new InvocationLog(join(directory, "invocations.log"));
}

/** Details of a tool's InvocationLog entry. */
export interface ConformanceToolRun {
  idempotencyKey: string;
  arguments: Record<string, unknown>;
}

const orderParameters = { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"], additionalProperties: false };

function orderIdOf(argumentsValue: Record<string, unknown>): string {
  return String(argumentsValue.order_id);
}

function answerFromResult(prefix: string, results: ConformanceModelInput["turnToolResults"]): ConformanceModelReply {
  return { kind: "text", text: `${prefix}${results.map((result) => result.output).join("; ")}` };
}

function createConformanceModel(directory: string): ConformanceModel {
  const log = conformanceLog(directory);
  return {
    async reply(input) {
      log.record("model_call", { lastUserText: input.lastUserText, results: input.turnToolResults.length });
      const texts = conformanceUserTexts;
      const results = input.turnToolResults;
      switch (input.lastUserText) {
        case texts.readTool:
          return results.length === 0 ? { kind: "tool_call", toolName: "lookup_order", arguments: { order_id: "7" } } : answerFromResult("Order 7: ", results);
        case texts.approvedWrite:
          return results.length === 0 ? { kind: "tool_call", toolName: "refund_order", arguments: { order_id: "8" } } : answerFromResult("Refund: ", results);
        case texts.rejectedWrite:
          return results.length === 0 ? { kind: "tool_call", toolName: "refund_order", arguments: { order_id: "12" } } : answerFromResult("Refund: ", results);
        case texts.askUser:
          return results.length === 0 ? { kind: "tool_call", toolName: "ask_user", arguments: { ...conformanceQuestion, choices: [...conformanceQuestion.choices] } } : answerFromResult("You chose: ", results);
        case texts.failingModel:
          throw new Error(conformanceModelFailure);
        case texts.parkedModelCall: {
          const gate = new FileGate(directory, conformanceGateNames.modelCall);
          await gate.waitUntilOpen(input.signal === undefined ? {} : { signal: input.signal });
          return { kind: "text", text: "Order 9 is on its way." };
        }
        case texts.parkedWrite:
          return results.length === 0 ? { kind: "tool_call", toolName: "refund_order_slowly", arguments: { order_id: "10" } } : answerFromResult("Refund: ", results);
        case texts.perCallApprovalAsks:
          return results.length === 0 ? { kind: "tool_call", toolName: "cancel_order", arguments: { order_id: "1001" } } : answerFromResult("Cancel: ", results);
        case texts.perCallApprovalSkips:
          return results.length === 0 ? { kind: "tool_call", toolName: "cancel_order", arguments: { order_id: "1002" } } : answerFromResult("Cancel: ", results);
        case texts.frameworkApprovalKept:
          return results.length === 0 ? { kind: "tool_call", toolName: "reset_password", arguments: { order_id: "15" } } : answerFromResult("Reset: ", results);
        case texts.throwingWrite:
          return results.length === 0 ? { kind: "tool_call", toolName: "charge_order", arguments: { order_id: "13" } } : answerFromResult("Charge: ", results);
        case texts.parkedThrowingWrite:
          return results.length === 0 ? { kind: "tool_call", toolName: "charge_order", arguments: { order_id: "14" } } : answerFromResult("Charge: ", results);
        default:
          return { kind: "text", text: `You said: ${input.lastUserText}` };
      }
    },
  };
}

function createConformanceTools(directory: string): ConformanceTool[] {
  const log = conformanceLog(directory);
  const record = (name: string, argumentsValue: Record<string, unknown>, idempotencyKey: string): void => {
    const run: ConformanceToolRun = { idempotencyKey, arguments: argumentsValue };
    log.record(name, run);
  };
  return [
    {
      name: "lookup_order",
      description: "Look up an order by its ID.",
      parameters: orderParameters,
      effect: "read",
      execute: async (argumentsValue, context) => {
        record("lookup_order", argumentsValue, context.idempotencyKey);
        return `order ${orderIdOf(argumentsValue)} shipped`;
      },
    },
    {
      name: "refund_order",
      description: "Refund an order; ask the user first.",
      parameters: orderParameters,
      effect: "non_idempotent_write",
      execute: async (argumentsValue, context) => {
        record("refund_order", argumentsValue, context.idempotencyKey);
        return `refunded order ${orderIdOf(argumentsValue)}`;
      },
    },
    {
      name: "refund_order_slowly",
      description: "Refund an order, slowly; ask the user first.",
      parameters: orderParameters,
      effect: "non_idempotent_write",
      execute: async (argumentsValue, context) => {
        record("refund_order_slowly", argumentsValue, context.idempotencyKey);
        await new FileGate(directory, conformanceGateNames.singleAttemptTool).waitUntilOpen();
        return `refunded order ${orderIdOf(argumentsValue)}`;
      },
    },
    {
      name: "cancel_order",
      description: "Cancel an order; large orders need the user's approval.",
      parameters: orderParameters,
      effect: "idempotent_write",
      frameworkApproval: (argumentsValue) => orderIdOf(argumentsValue) === "1001",
      execute: async (argumentsValue, context) => {
        record("cancel_order", argumentsValue, context.idempotencyKey);
        return `cancelled order ${orderIdOf(argumentsValue)}`;
      },
    },
    {
      name: "reset_password",
      description: "Reset the password of an order's account; ask the user first.",
      parameters: orderParameters,
      effect: "idempotent_write",
      frameworkApproval: true,
      execute: async (argumentsValue, context) => {
        record("reset_password", argumentsValue, context.idempotencyKey);
        return `reset the password of order ${orderIdOf(argumentsValue)}`;
      },
    },
    {
      name: "charge_order",
      description: "Charge an order; ask the user first.",
      parameters: orderParameters,
      effect: "non_idempotent_write",
      execute: async (argumentsValue, context) => {
        record("charge_order", argumentsValue, context.idempotencyKey);
        if (orderIdOf(argumentsValue) === "14") await new FileGate(directory, conformanceGateNames.throwingWrite).waitUntilOpen();
        throw new Error(conformanceToolFailure);
      },
    },
  ];
}

/** The setup of a test whose logs and gates live in `directory`. */
export function runnerConformanceSetup(directory: string): RunnerConformanceSetup {
  return {
    flowType: conformanceFlowType,
    instructions: "You help customers with their orders.",
    model: createConformanceModel(directory),
    tools: createConformanceTools(directory),
    builtInTools: ["ask_user"],
  };
}
