/**
 * Cron expressions of scheduled turns, read by `croner`: 5 fields
 * (minute hour day month weekday) or 6 with seconds first, in an IANA time
 * zone (UTC by default). Pure computation, so RPCs and Steps may call it.
 */
import { InvalidInputError } from "@perdure/engine";
import { Cron } from "croner";

/** The longest cron expression a schedule keeps. */
const maxCronLength = 200;

function cronOf(expression: string, timezone: string): Cron {
  try {
    return new Cron(expression, { timezone, paused: true, mode: "5-or-6-parts" });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new InvalidInputError(`every ${JSON.stringify(expression)} in time zone ${JSON.stringify(timezone)} is not a cron expression Perdure reads (${reason}): use 5 fields "minute hour day month weekday", or 6 with seconds first, such as "0 9 * * 1-5" or "*/30 * * * * *"`);
  }
}

/** Throws `InvalidInputError` naming the expression when it is not one, or never runs. */
export function checkCronExpression(expression: unknown, timezone: string, nowMs: number): string {
  if (typeof expression !== "string" || expression.trim() === "" || expression.length > maxCronLength) {
    throw new InvalidInputError(`every must be a cron expression of 1 to ${maxCronLength} characters, got ${typeof expression === "string" ? JSON.stringify(expression.slice(0, 60)) : typeof expression}`);
  }
  if (nextCronRunMs(expression, timezone, nowMs) === null) {
    throw new InvalidInputError(`every ${JSON.stringify(expression)} never runs after ${new Date(nowMs).toISOString()}`);
  }
  return expression.trim();
}

/** Throws `InvalidInputError` when `timezone` is not an IANA time zone this runtime knows. */
export function checkTimezone(timezone: unknown): string {
  if (timezone === undefined || timezone === null) return "UTC";
  if (typeof timezone !== "string" || timezone === "" || timezone.length > 64) throw new InvalidInputError(`timezone must be an IANA time zone name such as "Europe/Paris", got ${JSON.stringify(timezone)}`);
  try {
    new Intl.DateTimeFormat("en", { timeZone: timezone });
  } catch {
    throw new InvalidInputError(`timezone ${JSON.stringify(timezone)} is not an IANA time zone this runtime knows; use a name such as "UTC" or "Europe/Paris"`);
  }
  return timezone;
}

/** The first run strictly after `afterMs`, in epoch milliseconds, or null when there is none. */
export function nextCronRunMs(expression: string, timezone: string, afterMs: number): number | null {
  const next = cronOf(expression, timezone).nextRun(new Date(afterMs));
  return next === null ? null : next.getTime();
}
