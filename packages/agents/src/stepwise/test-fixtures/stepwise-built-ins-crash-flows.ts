/**
 * Stepwise session Flows with built-in tools and plans, for the SIGKILL
 * tests: Worker child processes run them (see
 * `stepwise-built-ins-worker-main.ts`) and the test process uses the same
 * definitions to start sessions and read them. Model calls and tool runs are
 * recorded in an InvocationLog, and the Worker parks at FileGates, both in
 * the folder named by `PERDURE_BUILT_INS_CRASH_DIRECTORY`.
 */
import { join } from "node:path";
import type { DeferredToolOutcome } from "../../contract/agent-framework-runner.ts";
import { FileGate } from "../../testing/file-gate.ts";
import { InvocationLog } from "../../testing/invocation-log.ts";
import { createStepwiseAgentSessionFlow } from "../create-stepwise-agent-session-flow.ts";
import { functionTool } from "../function-tool.ts";
import type { ModelRequest } from "../model-client.ts";
import { ScriptedModelClient, type ScriptedModelReply } from "../scripted-model-client.ts";

export const builtInsCrashDirectoryEnvironmentVariable = "PERDURE_BUILT_INS_CRASH_DIRECTORY";

export const builtInsCrashGateNames = {
  /** The second run of `book_room`, after its question was answered, on every run. */
  toolSecondRun: "built-ins-tool-second-run",
  /** The first model call of an executing turn, on its first invocation only. */
  executingModelCall: "built-ins-executing-model-call",
} as const;

/** Details of a `model_call` entry. */
export interface BuiltInsModelCall {
  flowType: string;
  turnId: string;
  attempt: number;
  lastUserText: string;
}

export function builtInsCrashLog(directory: string): InvocationLog {
  return new InvocationLog(join(directory, "invocations.log"));
}

function crashDirectory(): string {
  const directory = process.env[builtInsCrashDirectoryEnvironmentVariable];
  if (directory === undefined || directory === "") throw new Error(`set ${builtInsCrashDirectoryEnvironmentVariable} to the crash test's folder`);
  return directory;
}

function logged(flowType: string, script: (request: ModelRequest) => ScriptedModelReply | Promise<ScriptedModelReply>): ScriptedModelClient {
  return new ScriptedModelClient(async (request) => {
    builtInsCrashLog(crashDirectory()).record("model_call", {
      flowType, turnId: request.turnId, attempt: request.attempt, lastUserText: ScriptedModelClient.userTexts(request).at(-1) ?? "",
    } satisfies BuiltInsModelCall);
    return script(request);
  });
}

function reportResults(request: ModelRequest): ScriptedModelReply | undefined {
  const results = ScriptedModelClient.toolResults(request);
  return results.length > 0 ? { text: `Results: ${results.map((result) => result.output).join(" | ")}` } : undefined;
}

export const crashAskUserFlow = createStepwiseAgentSessionFlow({
  name: "crash-ask", instructions: "Ask.", builtInTools: ["ask_user"],
  model: logged("CrashAskUser", (request) => reportResults(request) ?? { toolCalls: [{ name: "ask_user", id: "ask-1", arguments: { question: "Which day?", choices: ["Mon", "Tue"] } }] }),
}, "CrashAskUser");

export const crashDurableWaitFlow = createStepwiseAgentSessionFlow({
  name: "crash-wait", instructions: "Wait.", builtInTools: ["durable_wait"],
  model: logged("CrashDurableWait", (request) => reportResults(request) ?? { toolCalls: [{ name: "durable_wait", id: "wait-1", arguments: { duration_seconds: 86_400, reason: "until tomorrow" } }] }),
}, "CrashDurableWait");

/** A single-attempt write that asks which room before it books anything, then books (parking at a gate on every booking run). */
const bookRoom = functionTool({
  name: "book_room", description: "Book a room.", parameters: { type: "object", properties: {} }, effect: "non_idempotent_write", requiresApproval: false,
  execute: async (_arguments, context): Promise<DeferredToolOutcome | string> => {
    const log = builtInsCrashLog(crashDirectory());
    const [answer] = context.inputAnswers;
    if (answer === undefined) {
      log.record("book_room_asked", { attempt: context.attempt });
      return { kind: "tool_input_requested", question: "Which room?", choices: ["Blue", "Green"], continuation: "room-question" };
    }
    log.record("book_room_booking", { attempt: context.attempt, answer: answer.answer, continuation: context.inputContinuation ?? null });
    await new FileGate(crashDirectory(), builtInsCrashGateNames.toolSecondRun).waitUntilOpen({ signal: context.signal });
    return `booked ${answer.answer ?? ""}`;
  },
});

export const crashToolQuestionFlow = createStepwiseAgentSessionFlow({
  name: "crash-tool-question", instructions: "Book.", tools: [bookRoom],
  model: logged("CrashToolQuestion", (request) => reportResults(request) ?? { toolCalls: [{ name: "book_room", id: "book-1", arguments: {} }] }),
}, "CrashToolQuestion");

const executingPrefix = "[Perdure] The user approved plan revision";

export const crashPlanFlow = createStepwiseAgentSessionFlow({
  name: "crash-plan", instructions: "Plan.", builtInTools: ["write_todos"], planModeEnabled: true,
  model: logged("CrashPlan", async (request) => {
    const done = reportResults(request);
    if (done !== undefined) return done;
    const lastUser = ScriptedModelClient.userTexts(request).at(-1) ?? "";
    if (lastUser.startsWith(executingPrefix)) {
      const log = builtInsCrashLog(crashDirectory());
      const earlier = log.entries().filter((entry) => entry.name === "model_call" && (entry.details as BuiltInsModelCall).lastUserText.startsWith(executingPrefix));
      if (earlier.length === 1) await new FileGate(crashDirectory(), builtInsCrashGateNames.executingModelCall).waitUntilOpen({ signal: request.signal });
      return { toolCalls: [{ name: "write_todos", arguments: { todos: [{ content: "Ship it", status: "completed" }] } }] };
    }
    return { toolCalls: [{ name: "write_todos", arguments: { todos: [{ content: "Ship it", status: "pending" }] } }] };
  }),
}, "CrashPlan");

export const builtInsCrashFlows = [crashAskUserFlow, crashDurableWaitFlow, crashToolQuestionFlow, crashPlanFlow] as const;
