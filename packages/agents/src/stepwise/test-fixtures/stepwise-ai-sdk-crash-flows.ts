/**
 * Stepwise session Flows on the AI SDK client with a scripted
 * `MockLanguageModelV4`, for the SIGKILL tests: Worker child processes run
 * them (see `stepwise-ai-sdk-worker-main.ts`) and the test process uses the
 * same definitions to start sessions and read them. The model and the tools
 * record every real call in an InvocationLog and park at FileGates, both in
 * the folder named by `PERDURE_STEPWISE_CRASH_DIRECTORY`.
 */
import { join } from "node:path";
import { createAiSdkModelClient } from "../../ai-sdk/index.ts";
import { FileGate } from "../../testing/file-gate.ts";
import { InvocationLog } from "../../testing/invocation-log.ts";
import { createStepwiseAgentSessionFlow } from "../create-stepwise-agent-session-flow.ts";
import { functionTool } from "../function-tool.ts";
import {
  finishPart,
  promptAsJson,
  scriptedLanguageModel,
  scriptedToolCallId,
  textParts,
  toolCallPart,
  type PromptFacts,
} from "./stepwise-scripted-language-model.ts";

/** The folder of the gates and the InvocationLog; the test passes it to every Worker child. */
export const stepwiseCrashDirectoryEnvironmentVariable = "PERDURE_STEPWISE_CRASH_DIRECTORY";

/** The FileGates the fixtures park at. */
export const stepwiseCrashGateNames = {
  /** The second model call of a `StepwiseCrashRunModel` turn, on its first invocation only. */
  runModel: "stepwise-run-model",
  /** `send_payment` (non_idempotent_write, `CallSingleAttemptTool`), on every run. */
  singleAttemptWrite: "stepwise-single-attempt-write",
} as const;

/** Details of a `model_call` InvocationLog entry: what the model was given. */
export interface ModelCallDetails {
  flowType: string;
  modelCallInTurn: number;
  turnToolResults: PromptFacts["turnToolResults"];
  /** The whole prompt, as JSON data. */
  prompt: unknown[];
}

/** Details of a tool's InvocationLog entry. */
export interface ToolRunDetails {
  toolCallId: string;
  idempotencyKey: string;
  attempt: number;
}

/** The InvocationLog of the Stepwise crash tests in `directory`. */
export function stepwiseCrashLog(directory: string): InvocationLog {
  return new InvocationLog(join(directory, "invocations.log"));
}

function crashDirectory(): string {
  const directory = process.env[stepwiseCrashDirectoryEnvironmentVariable];
  if (directory === undefined || directory === "") {
    throw new Error(`set ${stepwiseCrashDirectoryEnvironmentVariable} to the crash test's folder (the test passes it to KillableWorkerProcess)`);
  }
  return directory;
}

const anthropicIdentity = { provider: "anthropic.messages", modelId: "claude-crash-test" };

/** Logs the call, then parks at `gateName` when `shouldPark` says so for this call. */
async function logModelCall(flowType: string, facts: PromptFacts, prompt: unknown[], signal: AbortSignal | undefined, shouldPark: (earlierCalls: ModelCallDetails[]) => boolean): Promise<void> {
  const directory = crashDirectory();
  const log = stepwiseCrashLog(directory);
  const earlier = log.entries().filter((entry) => entry.name === "model_call").map((entry) => entry.details as ModelCallDetails);
  const details: ModelCallDetails = { flowType, modelCallInTurn: facts.modelCallInTurn, turnToolResults: facts.turnToolResults, prompt };
  log.record("model_call", details);
  if (shouldPark(earlier)) {
    await new FileGate(directory, stepwiseCrashGateNames.runModel).waitUntilOpen(signal === undefined ? {} : { signal });
  }
}

function recordToolRun(toolName: string, details: ToolRunDetails): void {
  stepwiseCrashLog(crashDirectory()).record(toolName, details);
}

const orderIdParameters = { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"], additionalProperties: false };

/** A read that answers at once. */
const lookupOrder = functionTool<{ order_id: string }>({
  name: "lookup_order",
  description: "Look up an order by its ID.",
  parameters: orderIdParameters,
  effect: "read",
  execute: ({ order_id }, context) => {
    recordToolRun("lookup_order", { toolCallId: context.toolCallId, idempotencyKey: context.idempotencyKey, attempt: context.attempt });
    return `order ${order_id}: shipped`;
  },
});

/** A non_idempotent_write (approval by default) that parks at its gate on every run. */
const sendPayment = functionTool<{ amount: number }>({
  name: "send_payment",
  description: "Send a payment.",
  parameters: { type: "object", properties: { amount: { type: "number" } }, required: ["amount"] },
  effect: "non_idempotent_write",
  execute: async ({ amount }, context) => {
    recordToolRun("send_payment", { toolCallId: context.toolCallId, idempotencyKey: context.idempotencyKey, attempt: context.attempt });
    await new FileGate(crashDirectory(), stepwiseCrashGateNames.singleAttemptWrite).waitUntilOpen({ signal: context.signal });
    return `sent ${amount} EUR`;
  },
});

/** The model of `StepwiseCrashRunModel`: looks order 7 up, then answers; the answer's first invocation parks at `runModel`. */
export const runModelCrashLanguageModel = scriptedLanguageModel(anthropicIdentity, async (facts, options) => {
  await logModelCall("StepwiseCrashRunModel", facts, promptAsJson(options.prompt), options.abortSignal, (earlier) =>
    facts.modelCallInTurn === 2 && !earlier.some((call) => call.flowType === "StepwiseCrashRunModel" && call.modelCallInTurn === 2));
  const [result] = facts.turnToolResults;
  if (result !== undefined) return [...textParts("answer", ["Order 7: ", result.output]), finishPart("stop", { input: 30, output: 6 })];
  return [...textParts("intro", ["Let me look."]), toolCallPart(scriptedToolCallId(facts, 0), "lookup_order", '{"order_id": "7"}'), finishPart("tool-calls", { input: 20, output: 5 })];
});

/** The model of `StepwiseCrashWrite`: pays 12 EUR, then reports the payment's result. */
export const writeCrashLanguageModel = scriptedLanguageModel(anthropicIdentity, async (facts, options) => {
  await logModelCall("StepwiseCrashWrite", facts, promptAsJson(options.prompt), options.abortSignal, () => false);
  const [result] = facts.turnToolResults;
  if (result !== undefined) return [...textParts("answer", ["Payment result: ", result.output]), finishPart("stop", { input: 30, output: 6 })];
  return [toolCallPart(scriptedToolCallId(facts, 0), "send_payment", '{"amount": 12}'), finishPart("tool-calls", { input: 20, output: 5 })];
});

export const stepwiseRunModelCrashFlow = createStepwiseAgentSessionFlow(
  { name: "crash-run-model", instructions: "You look orders up.", model: createAiSdkModelClient(runModelCrashLanguageModel), tools: [lookupOrder] },
  "StepwiseCrashRunModel",
);

export const stepwiseWriteCrashFlow = createStepwiseAgentSessionFlow(
  { name: "crash-write", instructions: "You send payments.", model: createAiSdkModelClient(writeCrashLanguageModel), tools: [sendPayment] },
  "StepwiseCrashWrite",
);

/** Every Flow of the Stepwise crash tests, for the Worker children and the test's Client. */
export const stepwiseCrashFlows = [stepwiseRunModelCrashFlow, stepwiseWriteCrashFlow] as const;
