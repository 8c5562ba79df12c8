/**
 * Routes a call of an enabled built-in tool in `RunModel`'s commit, with the
 * fixed policy `read`, no approval: `ask_user` raises its question and moves
 * to `AwaitQuestionAnswer`, `durable_wait` moves to `AwaitTimer`,
 * `write_todos` replaces the plan at once, and `schedule_turn` moves to
 * `ScheduleTurnCall`. Invalid arguments fail the call in
 * this commit, so no Step runs for it.
 */
import { movement } from "@perdure/engine";
import type { AgentInterrupt } from "../../contract/values/agent-interrupt.ts";
import type { AgentToolCallRecord } from "../../contract/values/agent-tool-call.ts";
import { invalidBuiltInToolArguments, invalidTodos, writeTodosCalledMoreThanOnce } from "../../contract/values/result-texts.ts";
import { replacePlan } from "../plans/plan-writes.ts";
import { finishToolCall } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import type { DeferralContext, DeferredCallWork } from "../steps/deferral-types.ts";
import { interruptRaisedPayload } from "../steps/interrupt-events.ts";
import { checkAskUserArguments, checkDurableWaitArguments, checkScheduleTurnArguments, checkWriteTodosArguments } from "./built-in-tool-arguments.ts";
import { questionLoad } from "./question-load.ts";

async function fail(deferral: DeferralContext, record: AgentToolCallRecord, error: string): Promise<DeferredCallWork> {
  await finishToolCall(deferral.context, deferral.environment.persistence, record, "failed", { output: error, error }, deferral.events);
  return {};
}

async function askUser(deferral: DeferralContext, record: AgentToolCallRecord): Promise<DeferredCallWork> {
  const checked = checkAskUserArguments(record.arguments);
  if (!checked.ok) return fail(deferral, record, invalidBuiltInToolArguments("ask_user", checked.reason));
  const { question, choices, allowsFreeText } = checked.value;
  const { context, environment, events } = deferral;
  // An ask_user question's interrupt ID is the tool call ID.
  const interrupt: AgentInterrupt = {
    interruptId: record.toolCallId, kind: "question", toolCallId: record.toolCallId, toolName: record.toolName, arguments: record.arguments,
    turnId: record.turnId, deadline: deferral.deadline, createdAt: deferral.now, question, ...(choices === null ? {} : { choices }), allowsFreeText,
  };
  context.write(environment.persistence.agentToolCalls.instance(record.toolCallId), { ...record, status: "awaiting_answer" });
  await events.write("interrupt_raised", interruptRaisedPayload(interrupt));
  return { interrupt, movement: movement(AgentStepType.AwaitQuestionAnswer, record.toolCallId, { load: questionLoad(environment, interrupt.interruptId) }) };
}

async function durableWait(deferral: DeferralContext, record: AgentToolCallRecord): Promise<DeferredCallWork> {
  const { context, environment, events } = deferral;
  const checked = checkDurableWaitArguments(record.arguments, environment.options.maxDurableWaitMs / 1000);
  if (!checked.ok) return fail(deferral, record, invalidBuiltInToolArguments("durable_wait", checked.reason));
  const waitUntil = new Date(Date.parse(deferral.now) + checked.value.durationSeconds * 1000).toISOString();
  context.write(environment.persistence.agentToolCalls.instance(record.toolCallId), { ...record, status: "waiting_for_timer", waitUntil });
  await events.write("timer_started", { tool_call_id: record.toolCallId, wait_until: waitUntil, reason: checked.value.reason });
  return { movement: movement(AgentStepType.AwaitTimer, record.toolCallId) };
}

/** `schedule_turn` stores its schedule in `ScheduleTurnCall`, a short Step that holds the schedules' lock. */
async function scheduleTurn(deferral: DeferralContext, record: AgentToolCallRecord): Promise<DeferredCallWork> {
  const checked = checkScheduleTurnArguments(record.arguments);
  if (!checked.ok) return fail(deferral, record, invalidBuiltInToolArguments("schedule_turn", checked.reason));
  deferral.context.write(deferral.environment.persistence.agentToolCalls.instance(record.toolCallId), record);
  return { movement: movement(AgentStepType.ScheduleTurnCall, record.toolCallId) };
}

async function writeTodos(deferral: DeferralContext, record: AgentToolCallRecord): Promise<DeferredCallWork> {
  if (deferral.writeTodosCount > 1) return fail(deferral, record, writeTodosCalledMoreThanOnce);
  const checked = checkWriteTodosArguments(record.arguments);
  if (!checked.ok) return fail(deferral, record, invalidTodos(checked.reason));
  const { context, environment, state, events } = deferral;
  const output = await replacePlan(context, environment.persistence, checked.value, state.interactionMode ?? "chat", events);
  await finishToolCall(context, environment.persistence, record, "succeeded", { output, error: null }, events);
  return {};
}

/** Records one built-in call and returns what it adds to the commit. */
export async function settleBuiltInCall(deferral: DeferralContext, runnerRecord: AgentToolCallRecord): Promise<DeferredCallWork> {
  // Built-in tools run under a fixed policy, whatever the runner resolved.
  const record: AgentToolCallRecord = { ...runnerRecord, effect: "read", requiresApproval: false, status: "approved" };
  await deferral.events.write("tool_call_deferred", { tool_call_id: record.toolCallId, tool_name: record.toolName, effect: "read", requires_approval: false });
  switch (record.toolName) {
    case "ask_user":
      return askUser(deferral, record);
    case "durable_wait":
      return durableWait(deferral, record);
    case "schedule_turn":
      return scheduleTurn(deferral, record);
    default:
      return writeTodos(deferral, record);
  }
}
