/**
 * Sessions whose every deadline kind runs in one turn each, for the test of
 * Workers with a skewed wall clock on PostgreSQL. The turn's user text picks
 * what the model does: `wait` (a `durable_wait`), `refund` (a write that
 * needs approval), `ask` (an `ask_user` question), `task` (a tool task that
 * polls twice and asks a question in between).
 */
import type { DeferredToolExecution, DeferredToolOutcome, ToolTaskPoll, ToolTaskPollOutcome } from "../../contract/agent-framework-runner.ts";
import { ScriptedAgentRunner, type ScriptInput, type ScriptReply } from "../../testing/scripted-agent-runner.ts";
import { createAgentSessionFlow } from "../create-agent-session-flow.ts";

/** How long `wait` waits, in seconds. */
export const skewWaitSeconds = 3;
/** The interrupt deadline of {@link shortDeadlineFlow}: it passes while the test watches. */
export const shortDeadlineMs = 4000;
/** The interrupt deadline of {@link longDeadlineFlow}: the test answers well within it. */
export const longDeadlineMs = 120_000;

function script(input: ScriptInput): ScriptReply {
  const request = input.userTexts.at(-1) ?? "";
  if (input.modelCall > 1) return { text: `${request}: ${input.previousResults.map((call) => call.output ?? "").join(" | ")}` };
  switch (request) {
    case "wait":
      return { toolCalls: [{ name: "durable_wait", arguments: { duration_seconds: skewWaitSeconds, reason: "skew" } }] };
    case "refund":
      return { toolCalls: [{ name: "refund", arguments: { order_id: "7" } }] };
    case "ask":
      return { toolCalls: [{ name: "ask_user", arguments: { question: "Which order?" } }] };
    case "task":
      return { toolCalls: [{ name: "build_report", arguments: {} }] };
    default:
      return { text: `no script for ${request}` };
  }
}

/** The scripted runner plus a task poller: pending once, then a question, then the report. */
class ClockSkewRunner extends ScriptedAgentRunner {
  constructor() {
    super(script, {
      refund: { effect: "non_idempotent_write", requiresApproval: true, execute: async (args) => `refunded ${String(args["order_id"])}` },
      build_report: { effect: "read", execute: async () => Promise.reject(new Error("build_report runs as a task")) },
    });
  }

  override async executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    if (call.toolCall.toolName === "build_report") return { kind: "tool_task_started", taskId: `report-${call.toolCall.toolCallId}`, pollIntervalSeconds: 1 };
    return super.executeDeferredToolCall(call);
  }

  async pollToolTask(poll: ToolTaskPoll): Promise<ToolTaskPollOutcome> {
    if (poll.pendingAnswer !== null) return { output: `report (${poll.pendingAnswer.resolution}: ${poll.pendingAnswer.answer ?? ""})` };
    if (poll.toolCall.inputContinuation === undefined) return { kind: "tool_task_pending", pollIntervalSeconds: 2, continuation: "polled" };
    return { kind: "tool_input_requested", question: "Which format?", continuation: "format" };
  }
}

const builtInTools = ["durable_wait", "ask_user"] as const;

export const longDeadlineFlow = createAgentSessionFlow(new ClockSkewRunner(), "ClockSkewLongDeadline", { builtInTools: [...builtInTools], interruptDeadlineMs: longDeadlineMs });
export const shortDeadlineFlow = createAgentSessionFlow(new ClockSkewRunner(), "ClockSkewShortDeadline", { builtInTools: [...builtInTools], interruptDeadlineMs: shortDeadlineMs });
export const clockSkewSessionFlows = [longDeadlineFlow, shortDeadlineFlow];
