/** The Client-side calls of scheduled turns: `scheduleTurn` and `cancelScheduledTurn` over the session's RPCs. */
import type { Client } from "@perdure/engine";
import type { ScheduledTurn, ScheduledTurnMode } from "../../contract/values/scheduled-turn.ts";
import type { AgentSessionFlow } from "../create-agent-session-flow.ts";
import { personLockConflictRetryMs } from "../rpcs/person-lock-conflict-retry.ts";

/** When a scheduled turn runs: once `at` a time, or `every` time a cron expression matches. */
export type ScheduledTurnTiming = { at: Date | string | number } | { every: string; timezone?: string };

/** Options of {@link scheduleTurn}. */
export interface ScheduleTurnOptions {
  /** `"planning"` queues a `planMode` message (needs `planModeEnabled`). @default "chat" */
  mode?: ScheduledTurnMode;
  /** The schedule's ID; the same call with the same ID is answered by the stored schedule. @default `schedule-<n>` */
  scheduleId?: string;
}

/**
 * Schedules a user message that the session queues by itself, on the
 * store's clock: once `at` a time, or `every` cron match (5 fields, or 6
 * with seconds first; UTC unless `timezone`). A run due while a turn runs is
 * queued like any message; runs missed while no Worker ran are one catch-up
 * run. Returns the stored schedule, which the snapshot lists.
 *
 * @example
 * await scheduleTurn(client, flow, "session-1", { every: "0 9 * * 1-5", timezone: "Europe/Paris" }, "Summarize yesterday's tickets.");
 * await scheduleTurn(client, flow, "session-1", { at: new Date(Date.now() + 3 * 86_400_000) }, "Follow up on order 7.");
 */
export function scheduleTurn(client: Client, flow: AgentSessionFlow, sessionId: string, timing: ScheduledTurnTiming, text: string, options: ScheduleTurnOptions = {}): Promise<ScheduledTurn> {
  const when = "at" in timing ? { at: timing.at instanceof Date ? timing.at.toISOString() : timing.at } : { every: timing.every, ...(timing.timezone === undefined ? {} : { timezone: timing.timezone }) };
  return client.invokeRPC(flow.scheduleTurn, sessionId, { ...when, text, ...options }, { lockConflictRetryMs: personLockConflictRetryMs });
}

/**
 * Cancels a schedule; false when the session has none of that ID (it ran
 * its one time, or was cancelled). A message a run queued already stays
 * queued.
 *
 * @example
 * await cancelScheduledTurn(client, flow, "session-1", "schedule-1");
 */
export function cancelScheduledTurn(client: Client, flow: AgentSessionFlow, sessionId: string, scheduleId: string): Promise<boolean> {
  return client.invokeRPC(flow.cancelScheduledTurn, sessionId, { scheduleId }, { lockConflictRetryMs: personLockConflictRetryMs });
}
