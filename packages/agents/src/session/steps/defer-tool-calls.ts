/**
 * The `ToolCallsRequested` half of `RunModel`'s commit: one record per call,
 * interrupts for approvals and `ask_user`, and one Step per call that still
 * has work to do. Built-in calls with invalid arguments, `write_todos`, and
 * every call but `write_todos` of a planning turn are final in this commit.
 */
import { movement, moveToMany, type ExecuteContext, type Movement, type StepDecision } from "@perdure/engine";
import type { DeferralContext, DeferredCallWork } from "./deferral-types.ts";
import type { DeferredToolCall, ToolCallsRequested } from "../../contract/agent-framework-runner.ts";
import type { AgentEventWriter } from "../../contract/values/agent-event.ts";
import { approvalInterruptId, type AgentInterrupt } from "../../contract/values/agent-interrupt.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";
import type { AgentToolCallRecord } from "../../contract/values/agent-tool-call.ts";
import { planningTurnToolRejectedResult, subAgentLimitResult } from "../../contract/values/result-texts.ts";
import { isRetryableEffect } from "../../contract/values/tool-effect.ts";
import { loadedToolCalls } from "../build-turn-context.ts";
import { settleBuiltInCall } from "../built-in-tools/settle-built-in-call.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { appendMessages, finishToolCall, interruptDeadlineFromNow, isoNow } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { interruptRaisedPayload } from "./interrupt-events.ts";
import { toolStepMovementOptions } from "./tool-step-input.ts";
import { activationTraceContextField } from "../../tracing/activation-root.ts";

/** `CallTool` for effects that may repeat, `CallSingleAttemptTool` for the rest. */
export function toolStepFor(effect: AgentToolCallRecord["effect"]): string {
  return isRetryableEffect(effect) ? AgentStepType.CallTool : AgentStepType.CallSingleAttemptTool;
}

function newRecord(call: DeferredToolCall, turnId: string, deferralOrder: number): AgentToolCallRecord {
  return {
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    arguments: call.arguments,
    effect: call.policy.effect,
    requiresApproval: call.policy.requiresApproval,
    status: call.policy.requiresApproval ? "awaiting_approval" : "approved",
    output: null,
    error: null,
    turnId,
    deferralOrder,
    ...(call.toolSourceReference === undefined ? {} : { toolSourceReference: call.toolSourceReference }),
  };
}

async function deferRunnerCall(deferral: DeferralContext, record: AgentToolCallRecord): Promise<DeferredCallWork> {
  const { context, environment, events, deadline, now } = deferral;
  context.write(environment.persistence.agentToolCalls.instance(record.toolCallId), record);
  await events.write("tool_call_deferred", { tool_call_id: record.toolCallId, tool_name: record.toolName, effect: record.effect, requires_approval: record.requiresApproval });
  if (!record.requiresApproval) return { movement: movement(toolStepFor(record.effect), record.toolCallId, toolStepMovementOptions(environment, record.toolCallId)) };
  const interrupt: AgentInterrupt = {
    interruptId: approvalInterruptId(record.toolCallId), kind: "approval", toolCallId: record.toolCallId, toolName: record.toolName,
    arguments: record.arguments, turnId: record.turnId, deadline, createdAt: now,
  };
  await events.write("interrupt_raised", interruptRaisedPayload(interrupt));
  return { movement: movement(AgentStepType.AwaitToolApproval, record.toolCallId), interrupt };
}

/** A planning turn runs only `write_todos`; every other call is rejected in this commit. */
async function rejectInPlanningTurn(deferral: DeferralContext, record: AgentToolCallRecord): Promise<DeferredCallWork> {
  const { context, environment, events } = deferral;
  await events.write("tool_call_deferred", { tool_call_id: record.toolCallId, tool_name: record.toolName, effect: record.effect, requires_approval: record.requiresApproval });
  await finishToolCall(context, environment.persistence, record, "rejected", { output: planningTurnToolRejectedResult, error: planningTurnToolRejectedResult }, events);
  return {};
}

/** A sub-agent call over `maxSubAgentsPerTurn` fails in this commit, starting no child. */
async function refuseOverSubAgentLimit(deferral: DeferralContext, record: AgentToolCallRecord): Promise<DeferredCallWork> {
  const { context, environment, events } = deferral;
  const result = subAgentLimitResult(record.toolName, environment.options.maxSubAgentsPerTurn);
  await events.write("tool_call_deferred", { tool_call_id: record.toolCallId, tool_name: record.toolName, effect: record.effect, requires_approval: record.requiresApproval });
  await finishToolCall(context, environment.persistence, record, "failed", { output: result, error: result }, events);
  return {};
}

/** Records every call of the response and moves to one Step per call plus `ResumeTurn`. */
export async function deferToolCalls(
  context: ExecuteContext,
  environment: SessionEnvironment,
  state: AgentState,
  turnId: string,
  outcome: ToolCallsRequested,
  events: AgentEventWriter,
): Promise<StepDecision> {
  const { persistence, options } = environment;
  const appended = appendMessages(context, persistence, state, outcome.newMessages ?? [], turnId);
  // The turn keeps every round's records until it ends; the order continues across rounds.
  const turnCalls = loadedToolCalls(context, environment);
  const firstOrder = turnCalls.reduce((next, record) => Math.max(next, record.deferralOrder + 1), 0);
  // Every call of the response is known here, before any runs: the fan-out limit counts them in order, with the turn's earlier ones.
  let subAgentCalls = turnCalls.filter((record) => record.startsSubAgent === true).length;
  context.write(persistence.frameworkRunState, outcome.frameworkRunState);
  const now = isoNow(context);
  const builtIns = options.builtInTools as readonly string[];
  const deferral: DeferralContext = {
    context, environment, state, events, now,
    deadline: interruptDeadlineFromNow(context, options.interruptDeadlineMs),
    writeTodosCount: builtIns.includes("write_todos") ? outcome.toolCalls.filter((call) => call.toolName === "write_todos").length : 0,
  };
  const interrupts: AgentInterrupt[] = [...(context.read(persistence.pendingInterrupts) ?? [])];
  const movements: Movement[] = [];
  for (const [index, call] of outcome.toolCalls.entries()) {
    const record: AgentToolCallRecord = { ...newRecord(call, turnId, firstOrder + index), ...activationTraceContextField(context, environment) };
    const isBuiltIn = builtIns.includes(call.toolName);
    const isPlanningRejected = state.interactionMode === "planning" && !(isBuiltIn && call.toolName === "write_todos");
    const isSubAgent = call.startsSubAgent === true && !isBuiltIn && !isPlanningRejected;
    const isOverSubAgentLimit = isSubAgent && subAgentCalls >= options.maxSubAgentsPerTurn;
    if (isSubAgent && !isOverSubAgentLimit) {
      subAgentCalls += 1;
      record.startsSubAgent = true;
    }
    const work = isPlanningRejected
      ? await rejectInPlanningTurn(deferral, record)
      : isBuiltIn
        ? await settleBuiltInCall(deferral, record)
        : isOverSubAgentLimit
          ? await refuseOverSubAgentLimit(deferral, record)
          : await deferRunnerCall(deferral, record);
    if (work.interrupt !== undefined) interrupts.push(work.interrupt);
    if (work.movement !== undefined) movements.push(work.movement);
  }
  // A sub-agent session that now waits for a person wakes its parent, which asks in its own stream.
  if (interrupts.length > (context.read(persistence.pendingInterrupts) ?? []).length && context.read(persistence.parentSession) !== undefined) {
    movements.push(movement(AgentStepType.NotifyParentSession));
  }
  context.write(persistence.pendingInterrupts, interrupts);
  // A write_todos call may have replaced the plan in this commit; AgentState is written last.
  context.write(persistence.agentState, { ...appended, status: "running_tools" });
  return moveToMany([...movements, movement(AgentStepType.ResumeTurn, outcome.toolCalls.length)]);
}
