import { defineStep, moveTo, TerminalError, type ExecuteContext, type StepDecision, type StepDefinition } from "@perdure/engine";
import { afterTurnEnded } from "./after-turn-ended.ts";
import { durableBoundary } from "@perdure/engine/internal";
import type { AgentTurnOutcome, TurnCompleted } from "../../contract/agent-framework-runner.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";
import { addAgentUsage, agentUsageToWire, emptyAgentUsage, type AgentUsage } from "../../contract/values/agent-usage.ts";
import type { AgentEventWriter } from "../../contract/values/agent-event.ts";
import { buildTurnContext } from "../build-turn-context.ts";
import { withBackgroundHeartbeat } from "../event-writer.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { appendMessages, clearTurnRecords, readState, turnMessageCount } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { moveToModelInputStep, requireModelInputLoaded } from "../messages/model-input-loads.ts";
import { warnWhenHistoryDeleted } from "../messages/deleted-history-warning.ts";
import { compactionThroughSequence, startCompaction } from "./compaction-trigger.ts";
import { withChatSpan } from "../../tracing/chat-span.ts";
import { deferToolCalls } from "./defer-tool-calls.ts";
import { turnControlOf } from "./turn-control-checks.ts";
import { writeModelCallRecord } from "../records/record-writes.ts";

/** Refuses outcomes that break the runner contract; retrying would not help. */
function checkOutcome(outcome: AgentTurnOutcome): void {
  if (outcome?.kind === "turn_completed") {
    if (!Array.isArray(outcome.newMessages)) throw new TerminalError("runModelStep returned turn_completed without a newMessages array");
    return;
  }
  if (outcome?.kind !== "tool_calls_requested") {
    throw new TerminalError(`runModelStep returned ${JSON.stringify(outcome)?.slice(0, 200)}; return a TurnCompleted or ToolCallsRequested`);
  }
  if (typeof outcome.frameworkRunState !== "string" || outcome.frameworkRunState === "") {
    throw new TerminalError("runModelStep returned tool_calls_requested with an empty frameworkRunState");
  }
  if (!Array.isArray(outcome.toolCalls) || outcome.toolCalls.length === 0) {
    throw new TerminalError("runModelStep returned tool_calls_requested without tool calls");
  }
  const seen = new Set<string>();
  for (const call of outcome.toolCalls) {
    if (typeof call.toolCallId !== "string" || call.toolCallId === "" || seen.has(call.toolCallId)) {
      throw new TerminalError(`runModelStep returned tool call ID ${JSON.stringify(call.toolCallId)}, which is empty or repeated in one response`);
    }
    seen.add(call.toolCallId);
    if (typeof call.toolName !== "string" || call.toolName === "" || typeof call.arguments !== "string") {
      throw new TerminalError(`runModelStep returned tool call ${call.toolCallId} without a tool name or JSON arguments text`);
    }
    if (typeof call.policy?.effect !== "string" || typeof call.policy.requiresApproval !== "boolean") {
      throw new TerminalError(`runModelStep returned tool call ${call.toolCallId} without a resolved policy; use turn.resolveToolPolicy(name)`);
    }
  }
}

/** Adds a model call's usage to `AgentUsage` and writes `usage_recorded`. */
export async function recordUsage(context: ExecuteContext, environment: SessionEnvironment, usage: AgentUsage, events: AgentEventWriter): Promise<void> {
  const { agentUsage } = environment.persistence;
  const session = addAgentUsage(context.read(agentUsage) ?? emptyAgentUsage(), usage);
  context.write(agentUsage, session);
  await events.write("usage_recorded", { recorded: agentUsageToWire(usage), session: agentUsageToWire(session) });
}

async function completeTurn(context: ExecuteContext, environment: SessionEnvironment, state: AgentState, turnId: string, outcome: TurnCompleted, events: AgentEventWriter): Promise<StepDecision> {
  const { persistence } = environment;
  const appended = appendMessages(context, persistence, state, outcome.newMessages, turnId);
  const messageCount = turnMessageCount(context, persistence, appended, turnId);
  clearTurnRecords(context, persistence);
  context.write(persistence.agentState, { ...appended, status: "waiting_for_user_message", activeTurnId: null, lastTurnError: null });
  await events.write("turn_completed", { message_count: messageCount });
  return afterTurnEnded(context, environment);
}

/** `RunModel`'s timeouts and retries, which `CompactContext` shares. */
export const modelCallExecuteOptions = {
  timeoutMs: 15 * 60_000,
  heartbeatTimeoutMs: 2 * 60_000,
  retry: { maximumAttempts: 3, totalDurationMs: 30 * 60_000 },
};

/** `RunModel`: one model call from committed state, then the turn's answer or its tool calls. */
export function createRunModelStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence, runner } = environment;
  return defineStep(AgentStepType.RunModel, {
    load: [persistence.agentMessages.all(), persistence.agentToolCalls.all(), persistence.steeredUserMessages],
    failureRoute: AgentStepType.RecordTurnFailure,
    executeOptions: modelCallExecuteOptions,
    execute: async (context) => {
      const state = readState(context, persistence);
      const turnId = state.activeTurnId;
      if (turnId === null) return moveTo(AgentStepType.AwaitUserMessage);
      // A steered or cancelled turn ends here, without a model call.
      if (turnControlOf(context, environment, turnId) !== null) return moveToModelInputStep(context, environment, AgentStepType.ApplyTurnControl, turnId);
      requireModelInputLoaded(context, environment);
      const turn = buildTurnContext(context, environment, state, turnId);
      // Under a compaction policy, an input near the context window is summarized first, without a model call.
      const throughSequence = await compactionThroughSequence(environment, turn, state);
      if (throughSequence !== null) return startCompaction(context, environment, state, throughSequence);
      warnWhenHistoryDeleted(context, environment);
      const outcome = await withChatSpan(context, environment, turn, () => withBackgroundHeartbeat(context, () => runner.runModelStep(turn)));
      // cancel_turn cancelled this execution: its commit would be dropped, so write no events for an answer nobody keeps.
      if (context.cancellationSignal.aborted) throw new Error(`the model call of ${turnId} was cancelled; its answer is dropped`);
      // The model answered (and was paid for); its record commits with this Step.
      durableBoundary("agent.model.before-record", context.flowId, turnId);
      checkOutcome(outcome);
      await recordUsage(context, environment, outcome.usage ?? emptyAgentUsage(), turn.events);
      if (outcome.modelCall !== undefined) writeModelCallRecord(context, persistence, turnId, outcome.kind, outcome.modelCall);
      return outcome.kind === "turn_completed"
        ? completeTurn(context, environment, state, turnId, outcome, turn.events)
        : deferToolCalls(context, environment, state, turnId, outcome, turn.events);
    },
  });
}
