/**
 * What `schedule_turn` (the RPC and the agent's built-in tool) takes, and how
 * a request becomes a stored {@link ScheduledTurn}: every time comes from the
 * store's clock, never the caller's.
 */
import { describeValue, InvalidInputError } from "@perdure/engine";
import type { ScheduledTurn, ScheduledTurnMode, ScheduledTurns } from "../../contract/values/scheduled-turn.ts";
import { isBlankText } from "../../contract/values/result-texts.ts";
import type { ResolvedAgentSessionOptions } from "../session-options.ts";
import { checkCronExpression, checkTimezone, nextCronRunMs } from "./cron-expression.ts";

/** The most schedules one session keeps; one more is refused. */
export const maxScheduledTurns = 20;

/** How far in the past an `at` time may be (it then runs at once); an earlier one is refused as a likely mistake. */
export const pastAtToleranceMs = 5 * 60_000;

const scheduleIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/** Input of `schedule_turn`: `at` or `every`, never both. */
export interface ScheduleTurnInput {
  /** One run at this time: ISO 8601 text or epoch milliseconds, on the store's clock. */
  at?: string | number;
  /** Runs on this cron expression: 5 fields, or 6 with seconds first. */
  every?: string;
  /** The IANA time zone `every` reads in. @default "UTC" */
  timezone?: string;
  /** The user message each run queues. */
  text: string;
  /** @default "chat" */
  mode?: ScheduledTurnMode;
  /**
   * The schedule's ID (1 to 64 letters, digits, ".", "_", ":" or "-"). The
   * same request with the same ID returns the stored schedule and adds
   * nothing, so a retried call is safe; another request with a taken ID is
   * refused. @default `schedule-<n>`
   */
  scheduleId?: string;
}

export function checkScheduleId(value: unknown): string {
  if (typeof value !== "string" || !scheduleIdPattern.test(value)) {
    throw new InvalidInputError(`scheduleId ${describeValue(value)} is invalid: use 1 to 64 letters, digits, ".", "_", ":" or "-", starting with a letter or digit`);
  }
  return value;
}

function field(object: Record<string, unknown>, camel: string, snake: string): unknown {
  return object[camel] ?? object[snake];
}

/** Checks a raw `schedule_turn` input; throws a `TypeError`/`InvalidInputError` naming the bad value. */
export function parseScheduleTurnInput(raw: unknown): ScheduleTurnInput {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new TypeError(`schedule_turn takes an object, got ${describeValue(raw)}`);
  const object = raw as Record<string, unknown>;
  const { at, every, text } = object;
  const mode = object.mode ?? "chat";
  const timezone = object.timezone;
  const scheduleId = field(object, "scheduleId", "schedule_id");
  if ((at === undefined || at === null) === (every === undefined || every === null)) {
    throw new TypeError(`schedule_turn takes exactly one of at (a time) and every (a cron expression), got ${at === undefined || at === null ? "neither" : "both"}`);
  }
  if (at !== undefined && at !== null && typeof at !== "string" && typeof at !== "number") throw new TypeError(`at must be ISO 8601 text or epoch milliseconds, got ${describeValue(at)}`);
  if (every !== undefined && every !== null && typeof every !== "string") throw new TypeError(`every must be a cron expression, got ${describeValue(every)}`);
  if (typeof text !== "string") throw new TypeError(`text must be a string, got ${describeValue(text)}`);
  if (mode !== "chat" && mode !== "planning") throw new TypeError(`mode must be "chat" or "planning", got ${describeValue(mode)}`);
  if (timezone !== undefined && timezone !== null && typeof timezone !== "string") throw new TypeError(`timezone must be a string, got ${describeValue(timezone)}`);
  return {
    ...(at === undefined || at === null ? {} : { at }),
    ...(every === undefined || every === null ? {} : { every }),
    ...(typeof timezone === "string" ? { timezone } : {}),
    text,
    mode,
    ...(scheduleId === undefined || scheduleId === null ? {} : { scheduleId: checkScheduleId(scheduleId) }),
  };
}

function atMs(at: string | number): number {
  const ms = typeof at === "number" ? at : Date.parse(at);
  if (!Number.isFinite(ms) || ms < 0 || ms > 8.64e15) throw new InvalidInputError(`at ${JSON.stringify(at)} is not a time: use ISO 8601 text such as "2026-12-24T09:00:00Z" or epoch milliseconds`);
  return ms;
}

/** The schedules after adding `input`, and the schedule it names (the stored one when the same request came before). */
export function addScheduledTurn(current: ScheduledTurns | undefined, input: ScheduleTurnInput, options: ResolvedAgentSessionOptions, nowMs: number, createdBy: ScheduledTurn["createdBy"]): { next: ScheduledTurns; schedule: ScheduledTurn; added: boolean } {
  const stored: ScheduledTurns = current ?? { nextNumber: 1, schedules: [] };
  if (isBlankText(input.text)) throw new InvalidInputError("text of a scheduled turn is blank; give the user message each run queues");
  const bytes = Buffer.byteLength(input.text);
  if (bytes > options.maxUserMessageBytes) throw new InvalidInputError(`text of ${bytes} bytes is over the session's maxUserMessageBytes of ${options.maxUserMessageBytes}`);
  const mode = input.mode ?? "chat";
  if (mode === "planning" && !options.planModeEnabled) throw new InvalidInputError('mode "planning" needs a session with planModeEnabled; use mode "chat"');
  const timezone = checkTimezone(input.timezone);
  let at: string | null = null;
  let every: string | null = null;
  let nextRunMs: number;
  if (input.at !== undefined) {
    const ms = atMs(input.at);
    if (ms < nowMs - pastAtToleranceMs) throw new InvalidInputError(`at ${new Date(ms).toISOString()} is more than ${pastAtToleranceMs / 60_000} minutes before the store's time ${new Date(nowMs).toISOString()}; give a future time`);
    at = new Date(ms).toISOString();
    nextRunMs = Math.max(ms, nowMs);
  } else {
    every = checkCronExpression(input.every, timezone, nowMs);
    nextRunMs = nextCronRunMs(every, timezone, nowMs) as number;
  }
  if (input.scheduleId !== undefined) {
    const existing = stored.schedules.find((schedule) => schedule.scheduleId === input.scheduleId);
    if (existing !== undefined) {
      const same = existing.text === input.text && existing.mode === mode && existing.every === every && existing.timezone === timezone && (at === null ? existing.at === null : existing.at === at);
      if (!same) throw new InvalidInputError(`schedule ${input.scheduleId} exists with other settings; cancel it first or choose another scheduleId`);
      return { next: stored, schedule: existing, added: false };
    }
  }
  if (stored.schedules.length >= maxScheduledTurns) {
    throw new InvalidInputError(`session already has ${stored.schedules.length} scheduled turns, the most it keeps (${maxScheduledTurns}); cancel one first`);
  }
  let number = stored.nextNumber;
  while (input.scheduleId === undefined && stored.schedules.some((schedule) => schedule.scheduleId === `schedule-${number}`)) number += 1;
  const scheduleId = input.scheduleId ?? `schedule-${number}`;
  const schedule: ScheduledTurn = {
    scheduleId, text: input.text, mode, at, every, timezone, nextRunAt: new Date(nextRunMs).toISOString(),
    runCount: 0, skippedCount: 0, lastRunAt: null, createdAt: new Date(nowMs).toISOString(), createdBy,
  };
  return { next: { nextNumber: number + 1, schedules: [...stored.schedules, schedule] }, schedule, added: true };
}
