/**
 * `AwaitScheduledTurn`: one execution per schedule waits on an engine Timer
 * at the schedule's `nextRunAt` (the store's clock, the clock Timers fire
 * on), holding no Worker. When it fires, one commit queues the schedule's
 * user message exactly as `send_user_message` does (so a turn that is
 * running keeps running, and the message starts the next one), records the
 * run, and for a cron schedule waits again for its next run after the
 * store's time now: runs missed while no Worker ran are one catch-up run,
 * never one per missed time.
 */
import { deadEnd, defineStep, moveTo, timer, type ExecuteContext, type StepDefinition } from "@perdure/engine";
import type { ScheduledTurn, ScheduledTurns } from "../../contract/values/scheduled-turn.ts";
import type { AgentUserMessage } from "../../contract/values/agent-user-message.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { AgentStepType } from "../step-types.ts";
import { nextCronRunMs } from "./cron-expression.ts";

/** The Timer ID of a schedule's wait, which `client.skipTimer` names. */
export function scheduledTurnTimerId(scheduleId: string): string {
  return `scheduled_turn:${scheduleId}`;
}

/** The `clientMessageId` of a schedule's n-th run: its UI message ID, so a reader tells scheduled messages apart. */
export function scheduledTurnMessageId(scheduleId: string, run: number): string {
  return `${scheduleId}-run-${run}`;
}

function parseScheduleId(input: unknown): string {
  if (typeof input !== "string" || input === "") throw new TypeError(`AwaitScheduledTurn takes a schedule ID, got ${typeof input}`);
  return input;
}

function hasQueueRoom(context: ExecuteContext, environment: SessionEnvironment, text: string): boolean {
  const { persistence, options } = environment;
  const waiting = [...context.pendingMessages(persistence.queuedUserMessages), ...context.pendingMessages(persistence.steeredUserMessages)];
  const bytes = waiting.reduce((total, entry) => total + Buffer.byteLength(entry.message.text), 0);
  return waiting.length + 1 <= options.maxQueuedUserMessages && bytes + Buffer.byteLength(text) <= options.maxQueuedUserMessageBytes;
}

function replace(stored: ScheduledTurns, schedule: ScheduledTurn | null, scheduleId: string): ScheduledTurns {
  const schedules = schedule === null
    ? stored.schedules.filter((candidate) => candidate.scheduleId !== scheduleId)
    : stored.schedules.map((candidate) => (candidate.scheduleId === scheduleId ? schedule : candidate));
  return { ...stored, schedules };
}

export function createAwaitScheduledTurnStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence, options } = environment;
  return defineStep<unknown>(AgentStepType.AwaitScheduledTurn, {
    load: [persistence.queuedUserMessages, persistence.steeredUserMessages],
    // schedule_turn and cancel_scheduled_turn write the same Attribute; they wait for this short commit.
    executeOptions: { locks: [persistence.scheduledTurns] },
    waitUntil: (context, input) => {
      const scheduleId = parseScheduleId(input);
      const schedule = context.read(persistence.scheduledTurns)?.schedules.find((candidate) => candidate.scheduleId === scheduleId);
      const at = Date.parse(schedule?.nextRunAt ?? "");
      // A schedule cancelled before this wait began ends at once.
      return timer(scheduledTurnTimerId(scheduleId), Number.isFinite(at) ? { at } : { afterMs: 0 });
    },
    execute: (context, input) => {
      const scheduleId = parseScheduleId(input);
      const stored = context.read(persistence.scheduledTurns);
      const schedule = stored?.schedules.find((candidate) => candidate.scheduleId === scheduleId);
      if (stored === undefined || schedule === undefined) return deadEnd();
      const nowMs = context.now();
      const now = new Date(nowMs).toISOString();
      let updated: ScheduledTurn;
      if (hasQueueRoom(context, environment, schedule.text)) {
        const run = schedule.runCount + 1;
        const message: AgentUserMessage = {
          text: schedule.text,
          ...(schedule.mode === "planning" && options.planModeEnabled ? { planMode: true } : {}),
          sentAt: now,
          clientMessageId: scheduledTurnMessageId(scheduleId, run),
        };
        context.publish(persistence.queuedUserMessages, message);
        updated = { ...schedule, runCount: run, lastRunAt: now };
      } else {
        updated = { ...schedule, skippedCount: schedule.skippedCount + 1 };
      }
      const nextMs = schedule.every === null ? null : nextCronRunMs(schedule.every, schedule.timezone, nowMs);
      if (nextMs === null) {
        context.write(persistence.scheduledTurns, replace(stored, null, scheduleId));
        return deadEnd();
      }
      context.write(persistence.scheduledTurns, replace(stored, { ...updated, nextRunAt: new Date(nextMs).toISOString() }, scheduleId));
      return moveTo(AgentStepType.AwaitScheduledTurn, scheduleId);
    },
  });
}
