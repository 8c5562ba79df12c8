/**
 * Session Flows for the message storage tests, imported by the test process
 * and by the Worker children of the rollover crash test. A user message
 * that is JSON (`{"replies": 600, "bytes": 2000}`) makes the model answer
 * with that many assistant messages of that many characters, so one turn
 * fills the window with a backlog; any other text gets one short answer.
 * With `"gate": "<name>"` the model call parks at that FileGate first.
 */
import type {
  AgentFrameworkRunner,
  AgentTurnContext,
  AgentTurnOutcome,
  ContextSummaryRequest,
  ContextSummaryResult,
  DeferredToolOutcome,
} from "../../contract/agent-framework-runner.ts";
import { FileGate } from "../../testing/file-gate.ts";
import { ScriptedAgentRunner } from "../../testing/scripted-agent-runner.ts";
import { emptyAgentUsage } from "../../contract/values/agent-usage.ts";
import type { FrameworkMessage } from "../../contract/values/agent-message.ts";
import { createAgentSessionFlow } from "../create-agent-session-flow.ts";
import type { AgentSessionOptions } from "../session-options.ts";

/** The folder of the gates; the crash test passes it to every Worker child. */
export const messageStorageDirectoryEnvironmentVariable = "PERDURE_MESSAGE_STORAGE_DIRECTORY";

/** What a JSON user message asks the bulk runner for. */
export interface BulkRequest {
  replies: number;
  bytes: number;
  gate?: string;
}

/** The user text that asks for `replies` answers of `bytes` characters each. */
export function bulkRequestText(request: BulkRequest): string {
  return JSON.stringify(request);
}

function parseBulkRequest(text: string): BulkRequest | undefined {
  if (!text.startsWith("{")) return undefined;
  const parsed = JSON.parse(text) as Partial<BulkRequest>;
  return { replies: parsed.replies ?? 1, bytes: parsed.bytes ?? 1, ...(parsed.gate === undefined ? {} : { gate: parsed.gate }) };
}

/** The text of reply `index` (from 1) of a bulk answer: its index, padded to `bytes` characters. */
export function bulkReplyText(index: number, bytes: number): string {
  return `reply ${index} `.padEnd(bytes, "x");
}

/** A runner without tools whose answers the user message chooses; see the module comment. */
export class BulkReplyRunner implements AgentFrameworkRunner<DeferredToolOutcome> {
  modelCalls = 0;

  buildUserMessage(text: string): FrameworkMessage {
    return { role: "user", text, frameworkItem: null };
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    this.modelCalls += 1;
    const lastUser = turn.messages.filter((message) => message.role === "user").at(-1);
    const request = parseBulkRequest(lastUser?.text ?? "");
    if (request?.gate !== undefined && turn.attempt === 1) {
      const directory = process.env[messageStorageDirectoryEnvironmentVariable];
      if (directory === undefined) throw new Error(`set ${messageStorageDirectoryEnvironmentVariable} for a gated bulk request`);
      await new FileGate(directory, request.gate).waitUntilOpen({ signal: turn.cancellationSignal });
    }
    const usage = { ...emptyAgentUsage(), inputTokens: turn.messages.length, outputTokens: 1, totalTokens: turn.messages.length + 1, requests: 1 };
    const replies: FrameworkMessage[] = request === undefined
      ? [{ role: "assistant", text: `answer to ${lastUser?.text ?? ""} after ${turn.messages.length} messages`, frameworkItem: null }]
      : Array.from({ length: request.replies }, (_unused, index) => ({ role: "assistant" as const, text: bulkReplyText(index + 1, request.bytes), frameworkItem: null }));
    return { kind: "turn_completed", newMessages: replies, usage };
  }

  async executeDeferredToolCall(): Promise<DeferredToolOutcome> {
    throw new Error("the bulk reply runner offers no tools");
  }
}

/** Stands in for a 0.1.0 Worker: its window never rolls over, so every message stays in `AgentMessages` and no index is written. */
export const unmovedWindowOptions: AgentSessionOptions = { messageWindowSize: 1_000_000, messageChunkSize: 32 };

/** The bulk runner's session Flow under `flowType` with `options`. */
export function createBulkReplyFlow(flowType: string, options: AgentSessionOptions = {}) {
  return createAgentSessionFlow(new BulkReplyRunner(), flowType, options);
}

/** The Flow type of the rollover crash test, with the default message storage options. */
export const rolloverCrashFlowType = "RolloverCrash";

/** The crash test's Flow, as its Worker children run it after the "upgrade". */
export const rolloverCrashFlow = createBulkReplyFlow(rolloverCrashFlowType);

/**
 * A ScriptedAgentRunner with one read tool, `lookup_order`: each turn calls
 * it once, then answers. A user text that starts with `park ` makes the
 * turn's first model call wait at the FileGate named by the rest of the
 * text, on its first attempt.
 */
export class ParkingLookupRunner extends ScriptedAgentRunner {
  /** The first sequence of each model call's `turn.messages`, in call order. */
  readonly inputFirstSequences: number[] = [];

  constructor() {
    super(
      (input) => input.modelCall === 1
        ? { toolCalls: [{ name: "lookup_order", arguments: { order_id: input.turnId } }], text: "Let me look." }
        : { text: `Answer: ${input.previousResults.map((call) => call.output).join(", ")}` },
      { lookup_order: { effect: "read", execute: async (args) => `order ${String(args.order_id)}: shipped` } },
    );
  }

  override async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    this.inputFirstSequences.push(turn.messages[0]?.sequence ?? 0);
    const lastUser = turn.messages.filter((message) => message.role === "user").at(-1)?.text ?? "";
    if (lastUser.startsWith("park ") && turn.frameworkRunState === null && turn.attempt === 1) {
      const directory = process.env[messageStorageDirectoryEnvironmentVariable];
      if (directory === undefined) throw new Error(`set ${messageStorageDirectoryEnvironmentVariable} for a parked turn`);
      await new FileGate(directory, lastUser.slice("park ".length)).waitUntilOpen({ signal: turn.cancellationSignal });
    }
    return super.runModelStep(turn);
  }
}

/** The parking runner's session Flow under `flowType` with `options`. */
export function createParkingLookupFlow(flowType: string, options: AgentSessionOptions = {}) {
  return createAgentSessionFlow(new ParkingLookupRunner(), flowType, options);
}

/** Tokens per message in {@link CompactingLookupRunner}'s estimates. */
export const tokensPerMessage = 10;

/**
 * A runner without tools whose every turn stores three assistant messages,
 * with trivial compaction methods: every message counts
 * {@link tokensPerMessage} tokens, the cutoff keeps as many newest messages
 * as the budget allows, and the summary names what it covers.
 */
export class CompactingEchoRunner implements AgentFrameworkRunner<DeferredToolOutcome> {
  summaryCalls = 0;

  buildUserMessage(text: string): FrameworkMessage {
    return { role: "user", text, frameworkItem: null };
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const lastUser = turn.messages.filter((message) => message.role === "user").at(-1)?.text ?? "";
    const replies = ["thinking", "checking", `answer to ${lastUser}`].map((text) => ({ role: "assistant" as const, text, frameworkItem: null }));
    return { kind: "turn_completed", newMessages: replies, usage: { ...emptyAgentUsage(), inputTokens: turn.messages.length, totalTokens: turn.messages.length, requests: 1 } };
  }

  async executeDeferredToolCall(): Promise<DeferredToolOutcome> {
    throw new Error("the compacting echo runner offers no tools");
  }

  estimateInputTokens(turn: AgentTurnContext): number {
    return turn.messages.length * tokensPerMessage;
  }

  selectCompactionCutoff(turn: AgentTurnContext, retainedTokenBudget: number): number | null {
    const last = turn.messages.at(-1)?.sequence ?? 0;
    const cutoff = last - Math.floor(retainedTokenBudget / tokensPerMessage);
    return cutoff >= 1 ? cutoff : null;
  }

  async summarizeContext(request: ContextSummaryRequest): Promise<ContextSummaryResult> {
    this.summaryCalls += 1;
    return { summary: `summary through ${request.throughSequence}`, usage: { ...emptyAgentUsage(), inputTokens: request.messages.length, totalTokens: request.messages.length, requests: 1 } };
  }
}
