/**
 * `ScheduledTurn`: a user message the session queues by itself, once at a
 * time (`at`) or on a cron schedule (`every`). A Perdure extension of the
 * contract: `schedule_turn` stores one, `cancel_scheduled_turn` removes it,
 * and the snapshot lists them.
 */
import { asWireObject, readNullableString, readNumber, readString, type WireObject } from "./wire.ts";

/** How a scheduled turn runs: a chat turn, or a planning turn (a `planMode` message). */
export type ScheduledTurnMode = "chat" | "planning";

export interface ScheduledTurn {
  /** `schedule-<n>`, or the ID the caller chose. */
  scheduleId: string;
  /** The user message each run queues. */
  text: string;
  mode: ScheduledTurnMode;
  /** ISO 8601 time of a one-time schedule; null for a cron schedule. */
  at: string | null;
  /** The cron expression of a repeating schedule (5 fields, or 6 with seconds first); null for a one-time one. */
  every: string | null;
  /** The IANA time zone the cron expression reads in. @default "UTC" */
  timezone: string;
  /** ISO 8601 time of the next run, on the store's clock. */
  nextRunAt: string;
  /** Runs that queued their message so far. */
  runCount: number;
  /** Runs skipped because the session's queue of waiting messages was full. */
  skippedCount: number;
  /** ISO 8601 time of the latest run, null before the first. */
  lastRunAt: string | null;
  /** ISO 8601 time it was scheduled, on the store's clock. */
  createdAt: string;
  /** Who scheduled it: a client (`client`) or the agent's `schedule_turn` tool (`agent`). */
  createdBy: "client" | "agent";
}

/** Every schedule of a session, and the number the next generated ID takes. */
export interface ScheduledTurns {
  nextNumber: number;
  schedules: ScheduledTurn[];
}

export function scheduledTurnToWire(schedule: ScheduledTurn): WireObject {
  return {
    schedule_id: schedule.scheduleId,
    text: schedule.text,
    mode: schedule.mode,
    at: schedule.at,
    every: schedule.every,
    timezone: schedule.timezone,
    next_run_at: schedule.nextRunAt,
    run_count: schedule.runCount,
    skipped_count: schedule.skippedCount,
    last_run_at: schedule.lastRunAt,
    created_at: schedule.createdAt,
    created_by: schedule.createdBy,
  };
}

export function scheduledTurnFromWire(data: unknown): ScheduledTurn {
  const object = asWireObject(data, "ScheduledTurn");
  return {
    scheduleId: readString(object, "schedule_id", ""),
    text: readString(object, "text", ""),
    mode: object.mode === "planning" ? "planning" : "chat",
    at: readNullableString(object, "at"),
    every: readNullableString(object, "every"),
    timezone: readString(object, "timezone", "UTC"),
    nextRunAt: readString(object, "next_run_at", ""),
    runCount: readNumber(object, "run_count", 0),
    skippedCount: readNumber(object, "skipped_count", 0),
    lastRunAt: readNullableString(object, "last_run_at"),
    createdAt: readString(object, "created_at", ""),
    createdBy: object.created_by === "agent" ? "agent" : "client",
  };
}

export function scheduledTurnsToWire(value: ScheduledTurns): WireObject {
  return { next_number: value.nextNumber, schedules: value.schedules.map(scheduledTurnToWire) };
}

export function scheduledTurnsFromWire(data: unknown): ScheduledTurns {
  const object = asWireObject(data, "ScheduledTurns");
  const schedules = Array.isArray(object.schedules) ? object.schedules.map(scheduledTurnFromWire) : [];
  return { nextNumber: readNumber(object, "next_number", 1), schedules };
}
