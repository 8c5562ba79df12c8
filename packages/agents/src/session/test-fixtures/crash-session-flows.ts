/**
 * Session Flows for the agent session crash tests, imported by the test
 * process (to start and drive sessions) and by Worker child processes (to run
 * them). Model calls and tools record each real run in an InvocationLog and
 * park at FileGates, both in the folder named by the
 * `PERDURE_AGENTS_CRASH_DIRECTORY` environment variable, so the test and its
 * children agree on the paths without passing them through the session.
 */
import { join } from "node:path";
import type { AgentTurnContext, AgentTurnOutcome, DeferredToolExecution } from "../../contract/agent-framework-runner.ts";
import { FileGate } from "../../testing/file-gate.ts";
import { InvocationLog } from "../../testing/invocation-log.ts";
import { createAgentSessionFlow } from "../create-agent-session-flow.ts";
import { ScriptedAgentRunner, type ScriptInput, type ScriptReply, type ScriptedTool } from "../../testing/scripted-agent-runner.ts";

/** The folder of the gates and the InvocationLog; the test passes it to every Worker child. */
export const crashDirectoryEnvironmentVariable = "PERDURE_AGENTS_CRASH_DIRECTORY";

/** The FileGates the fixtures park at. */
export const crashGateNames = {
  /** The second model call of a `CrashRunModel` turn, on its first attempt only. */
  runModel: "run-model",
  /** `save_report` (idempotent_write, `CallTool`), on its first run only. */
  callTool: "call-tool",
  /** `send_payment` (non_idempotent_write, `CallSingleAttemptTool`), on every run. */
  singleAttemptTool: "single-attempt-tool",
} as const;

/** The InvocationLog of the crash tests in `directory`. */
export function crashInvocationLog(directory: string): InvocationLog {
  return new InvocationLog(join(directory, "invocations.log"));
}

/** Details of a `model_call` InvocationLog entry. */
export interface ModelCallDetails {
  flowId: string;
  turnId: string;
  modelCall: number;
  attempt: number;
  /** The final tool call results the model call was given. */
  toolResults: { toolCallId: string; status: string; output: string | null; error: string | null }[];
}

/** Details of a tool's InvocationLog entry. */
export interface ToolRunDetails {
  flowId: string;
  toolCallId: string;
  idempotencyKey: string;
  attempt: number;
}

function crashDirectory(): string {
  const directory = process.env[crashDirectoryEnvironmentVariable];
  if (directory === undefined || directory === "") {
    throw new Error(`set ${crashDirectoryEnvironmentVariable} to the crash test's folder (the test passes it to KillableWorkerProcess)`);
  }
  return directory;
}

/** The model call number within the response chain, as ScriptedAgentRunner counts it. */
function modelCallNumber(turn: AgentTurnContext): number {
  return turn.frameworkRunState === null ? 1 : (JSON.parse(turn.frameworkRunState) as { model_calls: number }).model_calls + 1;
}

/**
 * A ScriptedAgentRunner whose model calls are logged, and where the second
 * model call of a turn can park at a FileGate.
 */
class CrashScriptedAgentRunner extends ScriptedAgentRunner {
  private readonly gateSecondModelCall: boolean;

  constructor(script: (input: ScriptInput) => ScriptReply, tools: Readonly<Record<string, ScriptedTool>>, options: { gateSecondModelCall: boolean }) {
    super(script, tools);
    this.gateSecondModelCall = options.gateSecondModelCall;
  }

  override async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const directory = crashDirectory();
    const log = crashInvocationLog(directory);
    const modelCall = modelCallNumber(turn);
    // The script is deterministic but the gate is not (it stays shut): the first attempt is the one with no earlier entry.
    const isFirstRun = !log.entries().some((entry) => {
      const details = entry.details as ModelCallDetails | undefined;
      return entry.name === "model_call" && details?.flowId === turn.flowId && details.turnId === turn.turnId && details.modelCall === modelCall;
    });
    const details: ModelCallDetails = {
      flowId: turn.flowId,
      turnId: turn.turnId,
      modelCall,
      attempt: turn.attempt,
      toolResults: turn.toolCalls.map((call) => ({ toolCallId: call.toolCallId, status: call.status, output: call.output, error: call.error })),
    };
    log.record("model_call", details);
    if (this.gateSecondModelCall && modelCall === 2 && isFirstRun) {
      await new FileGate(directory, crashGateNames.runModel).waitUntilOpen({ signal: turn.cancellationSignal });
    }
    return super.runModelStep(turn);
  }
}

/** Calls `toolName` once, then answers with the call's status and output. */
function callOnceThenReport(toolName: string, toolArguments: Record<string, unknown>, text?: string): (input: ScriptInput) => ScriptReply {
  return (input) => {
    if (input.modelCall === 1) return { toolCalls: [{ name: toolName, arguments: toolArguments }], ...(text === undefined ? {} : { text }) };
    const [call] = input.previousResults;
    return { text: `${call?.status ?? "no call"}: ${call?.output ?? ""}` };
  };
}

/** Records one real run of a tool; returns whether it is the tool's first run in this session. */
function recordToolRun(toolName: string, call: DeferredToolExecution): boolean {
  const log = crashInvocationLog(crashDirectory());
  const isFirstRun = !log.entries().some((entry) => entry.name === toolName && (entry.details as ToolRunDetails | undefined)?.toolCallId === call.toolCall.toolCallId);
  const details: ToolRunDetails = { flowId: call.flowId, toolCallId: call.toolCall.toolCallId, idempotencyKey: call.idempotencyKey, attempt: call.attempt };
  log.record(toolName, details);
  return isFirstRun;
}

/** A `read` tool that answers at once. */
const lookupOrder: ScriptedTool = {
  effect: "read",
  execute: async (args, call) => {
    recordToolRun("lookup_order", call);
    return `order ${String(args.order_id)}: shipped`;
  },
};

/** An `idempotent_write` without approval that parks at a gate on its first run. */
const saveReport: ScriptedTool = {
  effect: "idempotent_write",
  requiresApproval: false,
  execute: async (args, call) => {
    if (recordToolRun("save_report", call)) {
      await new FileGate(crashDirectory(), crashGateNames.callTool).waitUntilOpen({ signal: call.cancellationSignal });
    }
    return `report ${String(args.name)} saved under ${call.idempotencyKey}`;
  },
};

/** A `non_idempotent_write` (approval by default) that parks at a gate on every run. */
const sendPayment: ScriptedTool = {
  effect: "non_idempotent_write",
  execute: async (args, call) => {
    recordToolRun("send_payment", call);
    await new FileGate(crashDirectory(), crashGateNames.singleAttemptTool).waitUntilOpen({ signal: call.cancellationSignal });
    return `sent ${String(args.amount)} EUR`;
  },
};

/** A `non_idempotent_write` (approval by default) that answers at once. */
const deleteRecords: ScriptedTool = {
  effect: "non_idempotent_write",
  execute: async (args, call) => {
    recordToolRun("delete_records", call);
    return `deleted ${String(args.count)} records`;
  },
};

/** Looks up an order (read), then answers; the answering model call parks at `run-model` on its first attempt. */
export const crashRunModelFlow = createAgentSessionFlow(
  new CrashScriptedAgentRunner(callOnceThenReport("lookup_order", { order_id: "7" }, "Let me look."), { lookup_order: lookupOrder }, { gateSecondModelCall: true }),
  "CrashRunModel",
);

/** Saves a report (idempotent_write, no approval, `CallTool`) that parks at `call-tool` on its first run. */
export const crashCallToolFlow = createAgentSessionFlow(
  new CrashScriptedAgentRunner(callOnceThenReport("save_report", { name: "q3" }), { save_report: saveReport }, { gateSecondModelCall: false }),
  "CrashCallTool",
);

/** Sends a payment (non_idempotent_write, approval, `CallSingleAttemptTool`) that parks at `single-attempt-tool`. */
export const crashSingleAttemptToolFlow = createAgentSessionFlow(
  new CrashScriptedAgentRunner(callOnceThenReport("send_payment", { amount: 12 }), { send_payment: sendPayment }, { gateSecondModelCall: false }),
  "CrashSingleAttemptTool",
);

/** Deletes records (non_idempotent_write, approval) at once once approved. */
export const crashApprovalFlow = createAgentSessionFlow(
  new CrashScriptedAgentRunner(callOnceThenReport("delete_records", { count: 3 }), { delete_records: deleteRecords }, { gateSecondModelCall: false }),
  "CrashApproval",
);

/** Every crash test session Flow, for the Worker children and the test's environment. */
export const crashSessionFlows = [crashRunModelFlow, crashCallToolFlow, crashSingleAttemptToolFlow, crashApprovalFlow] as const;
