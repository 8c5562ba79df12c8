/**
 * `ScheduleTurnCall`: the agent's `schedule_turn` built-in call, as its own
 * short Step that holds the `ScheduledTurns` lock (a model call must not
 * hold it): one commit stores the schedule, finishes the call with the
 * schedule as its result, and starts the schedule's wait.
 */
import { deadEnd, defineStep, InvalidInputError, moveTo, type StepDefinition } from "@perdure/engine";
import { isFinalToolCallStatus } from "../../contract/values/agent-tool-call.ts";
import { invalidBuiltInToolArguments } from "../../contract/values/result-texts.ts";
import { checkScheduleTurnArguments } from "../built-in-tools/built-in-tool-arguments.ts";
import { createEventWriter } from "../event-writer.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { finishToolCall, readToolCallIfStored } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { parseToolCallId, recordRetry } from "../steps/tool-step-input.ts";
import { addScheduledTurn } from "./scheduled-turn-requests.ts";

export function createScheduleTurnCallStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence, options } = environment;
  return defineStep<unknown>(AgentStepType.ScheduleTurnCall, {
    load: (input) => [persistence.agentToolCalls.instance(parseToolCallId(input))],
    executeOptions: { retry: recordRetry, locks: [persistence.scheduledTurns] },
    execute: async (context, input) => {
      const record = readToolCallIfStored(context, persistence, parseToolCallId(input));
      // The turn ended (cancelled) before this ran: nothing to schedule.
      if (record === undefined || isFinalToolCallStatus(record.status)) return deadEnd();
      const events = createEventWriter(context, persistence, record.turnId);
      const checked = checkScheduleTurnArguments(record.arguments);
      if (!checked.ok) {
        const error = invalidBuiltInToolArguments("schedule_turn", checked.reason);
        await finishToolCall(context, persistence, record, "failed", { output: error, error }, events);
        return deadEnd();
      }
      const nowMs = context.now();
      const { text, afterSeconds, at, every, timezone } = checked.value;
      const timing = every !== null ? { every, ...(timezone === null ? {} : { timezone }) } : { at: afterSeconds !== null ? nowMs + afterSeconds * 1000 : (at as string) };
      let added;
      try {
        added = addScheduledTurn(context.read(persistence.scheduledTurns), { ...timing, text }, options, nowMs, "agent");
      } catch (error) {
        if (!InvalidInputError.isInstance(error)) throw error;
        const reason = invalidBuiltInToolArguments("schedule_turn", (error as Error).message);
        await finishToolCall(context, persistence, record, "failed", { output: reason, error: reason }, events);
        return deadEnd();
      }
      const { next, schedule } = added;
      context.write(persistence.scheduledTurns, next);
      const output = JSON.stringify({ status: "scheduled", schedule_id: schedule.scheduleId, next_run_at: schedule.nextRunAt, every: schedule.every });
      await finishToolCall(context, persistence, record, "succeeded", { output, error: null }, events);
      return moveTo(AgentStepType.AwaitScheduledTurn, schedule.scheduleId);
    },
  });
}
