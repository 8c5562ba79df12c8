import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { InvalidInputError } from "@perdure/engine";
import { resolveAgentSessionOptions } from "../session-options.ts";
import { nextCronRunMs } from "./cron-expression.ts";
import { addScheduledTurn, maxScheduledTurns, parseScheduleTurnInput } from "./scheduled-turn-requests.ts";

const options = resolveAgentSessionOptions({});
const now = Date.parse("2026-12-06T10:00:00.250Z");

test("a seconds cron runs at the next multiple of its step strictly after the time asked, never at it", () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 0, max: 4_000_000_000_000 }), (step, afterMs) => {
    const next = nextCronRunMs(`*/${step} * * * * *`, "UTC", afterMs) as number;
    assert.ok(next > afterMs, `next ${next} after ${afterMs}`);
    assert.equal(next % 1000, 0);
    const second = new Date(next).getUTCSeconds();
    assert.equal(second % step, 0, `second ${second} is a multiple of ${step}`);
    // Nothing of the grid lies between: the run before `next` is at or before afterMs.
    const previousOnGrid = second === 0 ? null : next - step * 1000;
    if (previousOnGrid !== null) assert.ok(previousOnGrid <= afterMs);
  }), { numRuns: 300 });
});

test("a 5-field cron reads in its time zone: weekdays at 09:00 in Paris are 08:00 UTC in winter", () => {
  assert.equal(new Date(nextCronRunMs("0 9 * * 1-5", "Europe/Paris", Date.parse("2026-12-05T12:00:00Z")) as number).toISOString(), "2026-12-07T08:00:00.000Z");
});

test("schedule_turn input: exactly one of at and every, a string text, a known mode, a valid ID", () => {
  assert.throws(() => parseScheduleTurnInput({ text: "x" }), /exactly one of at .* and every .*got neither/);
  assert.throws(() => parseScheduleTurnInput({ text: "x", at: 1, every: "* * * * *" }), /got both/);
  assert.throws(() => parseScheduleTurnInput({ at: 1 }), /text must be a string, got undefined/);
  assert.throws(() => parseScheduleTurnInput({ text: "x", at: 1, mode: "executing" }), /mode must be "chat" or "planning", got 'executing'|mode must be "chat" or "planning", got "executing"/);
  assert.throws(() => parseScheduleTurnInput({ text: "x", at: 1, scheduleId: "a b" }), /scheduleId "a b" is invalid|scheduleId 'a b' is invalid/);
  assert.deepEqual(parseScheduleTurnInput({ text: "x", every: "*/2 * * * * *", schedule_id: "daily" }), { every: "*/2 * * * * *", text: "x", mode: "chat", scheduleId: "daily" });
});

test("a schedule's first run is on the store's clock; bad times, cron text and zones are refused naming the value", () => {
  const once = addScheduledTurn(undefined, { at: now + 60_000, text: "ping" }, options, now, "client");
  assert.equal(once.schedule.scheduleId, "schedule-1");
  assert.equal(once.schedule.nextRunAt, new Date(now + 60_000).toISOString());
  const cron = addScheduledTurn(once.next, { every: "*/2 * * * * *", text: "tick" }, options, now, "client");
  assert.equal(cron.schedule.scheduleId, "schedule-2");
  assert.equal(cron.schedule.nextRunAt, "2026-12-06T10:00:02.000Z");
  // A time a little in the past runs at once; far in the past is a mistake.
  assert.equal(addScheduledTurn(undefined, { at: now - 1000, text: "late" }, options, now, "client").schedule.nextRunAt, new Date(now).toISOString());
  assert.throws(() => addScheduledTurn(undefined, { at: now - 3_600_000, text: "x" }, options, now, "client"), (error: unknown) => InvalidInputError.isInstance(error) && /more than 5 minutes before the store's time/.test((error as Error).message));
  assert.throws(() => addScheduledTurn(undefined, { at: "tomorrow", text: "x" }, options, now, "client"), /at "tomorrow" is not a time/);
  assert.throws(() => addScheduledTurn(undefined, { every: "every day", text: "x" }, options, now, "client"), /every "every day" in time zone "UTC" is not a cron expression/);
  assert.throws(() => addScheduledTurn(undefined, { every: "0 0 30 2 *", text: "x" }, options, now, "client"), /never runs/);
  assert.throws(() => addScheduledTurn(undefined, { every: "* * * * *", timezone: "Mars/Olympus", text: "x" }, options, now, "client"), /timezone "Mars\/Olympus" is not an IANA time zone/);
  assert.throws(() => addScheduledTurn(undefined, { at: now, text: "  " }, options, now, "client"), /blank/);
  assert.throws(() => addScheduledTurn(undefined, { at: now, text: "x", mode: "planning" }, options, now, "client"), /needs a session with planModeEnabled/);
});

test("the same request with the same scheduleId adds nothing; another with a taken ID, or one past the limit, is refused", () => {
  const first = addScheduledTurn(undefined, { every: "0 9 * * *", text: "daily", scheduleId: "daily" }, options, now, "client");
  const again = addScheduledTurn(first.next, { every: "0 9 * * *", text: "daily", scheduleId: "daily" }, options, now + 5000, "client");
  assert.equal(again.added, false);
  assert.deepEqual(again.schedule, first.schedule);
  assert.throws(() => addScheduledTurn(first.next, { every: "0 10 * * *", text: "daily", scheduleId: "daily" }, options, now, "client"), /schedule daily exists with other settings/);
  let stored = first.next;
  for (let index = 1; index < maxScheduledTurns; index += 1) stored = addScheduledTurn(stored, { at: now + index, text: `t${index}` }, options, now, "client").next;
  assert.equal(stored.schedules.length, maxScheduledTurns);
  assert.throws(() => addScheduledTurn(stored, { at: now, text: "one more" }, options, now, "client"), new RegExp(`already has ${maxScheduledTurns} scheduled turns`));
  // A generated ID skips one a caller chose.
  const chosen = addScheduledTurn(undefined, { at: now, text: "x", scheduleId: "schedule-1" }, options, now, "client");
  assert.equal(addScheduledTurn(chosen.next, { at: now, text: "y" }, options, now, "client").schedule.scheduleId, "schedule-2");
});
