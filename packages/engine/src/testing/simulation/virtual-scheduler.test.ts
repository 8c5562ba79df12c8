import assert from "node:assert/strict";
import { test } from "node:test";
import { VirtualScheduler } from "./virtual-scheduler.ts";

void test("virtual timers fire in time order, equal times in the order they were set, and time moves only between them", async () => {
  const scheduler = new VirtualScheduler({ startAt: 1000 });
  const group = scheduler.group("a");
  const fired: string[] = [];
  group.after(20, () => fired.push(`late@${scheduler.now}`));
  group.after(5, () => {
    fired.push(`first@${scheduler.now}`);
    // Work a timer starts settles before time moves on.
    void Promise.resolve().then(() => fired.push(`microtask@${scheduler.now}`));
  });
  group.after(5, () => fired.push(`second@${scheduler.now}`));
  const cancel = group.after(10, () => fired.push("cancelled"));
  cancel();
  group.after(0, () => fired.push(`zero@${scheduler.now}`));
  assert.equal(await scheduler.run(() => false, Infinity), "idle");
  assert.deepEqual(fired, ["zero@1001", "first@1005", "microtask@1005", "second@1005", "late@1020"]);
});

void test("a crashed group fires nothing again; a paused one fires what fell due once the pause ends", async () => {
  const scheduler = new VirtualScheduler({ startAt: 0 });
  const crashed = scheduler.group("crashed");
  const paused = scheduler.group("paused");
  const fired: string[] = [];
  crashed.after(10, () => fired.push("crashed"));
  paused.after(10, () => fired.push(`paused@${scheduler.now}`));
  paused.after(600, () => fired.push(`after-pause@${scheduler.now}`));
  crashed.crash();
  crashed.after(1, () => fired.push("set after the crash"));
  paused.pauseUntil(500);
  assert.equal(paused.isPaused, true);
  assert.equal(await scheduler.run(() => false, Infinity), "idle");
  assert.deepEqual(fired, ["paused@500", "after-pause@600"]);
});

void test("a run stops at its horizon, or when it is done, with the next timer still queued", async () => {
  const scheduler = new VirtualScheduler({ startAt: 0 });
  const group = scheduler.group("a");
  let ticks = 0;
  const tick = (): void => {
    ticks += 1;
    group.after(100, tick);
  };
  group.after(100, tick);
  assert.equal(await scheduler.run(() => false, 1000), "horizon");
  assert.equal(ticks, 10);
  assert.equal(await scheduler.run(() => ticks >= 15, 10_000), "done");
  assert.equal(ticks, 15);
});
