/**
 * Virtual time for the deterministic simulation: one queue of timers for
 * every simulated process, and a loop that lets all pending work settle
 * before it moves time to the next timer. Time never passes while anything
 * can still run, so a run depends only on its seed.
 */
import type { LocalTimers } from "../../internal/local-timers.ts";

interface QueuedTimer {
  at: number;
  seq: number;
  group: TimerGroup;
  callback: () => void;
  cancelled: boolean;
}

/** A min-heap of timers by (at, seq): equal times fire in the order they were set. */
class TimerQueue {
  private readonly items: QueuedTimer[] = [];

  get size(): number {
    return this.items.length;
  }

  push(item: QueuedTimer): void {
    const items = this.items;
    items.push(item);
    let index = items.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!isEarlier(items[index]!, items[parent]!)) break;
      [items[index], items[parent]] = [items[parent]!, items[index]!];
      index = parent;
    }
  }

  pop(): QueuedTimer | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    items[0] = last;
    let index = 0;
    for (;;) {
      const left = index * 2 + 1;
      const right = left + 1;
      let smallest = index;
      if (left < items.length && isEarlier(items[left]!, items[smallest]!)) smallest = left;
      if (right < items.length && isEarlier(items[right]!, items[smallest]!)) smallest = right;
      if (smallest === index) break;
      [items[index], items[smallest]] = [items[smallest]!, items[index]!];
      index = smallest;
    }
    return top;
  }
}

function isEarlier(first: QueuedTimer, second: QueuedTimer): boolean {
  return first.at < second.at || (first.at === second.at && first.seq < second.seq);
}

/** Timers one run may fire before it counts as a busy loop. */
const maxEventsPerRun = 300_000;

/** Resolves once every microtask and `process.nextTick` queued so far, and all they queue, ran. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The timers of one simulated process. A crash drops them all for good; a
 * pause holds them until it ends (a paused process runs nothing).
 */
export class TimerGroup implements LocalTimers {
  readonly name: string;
  private readonly scheduler: VirtualScheduler;
  crashed = false;
  frozenUntil = -Infinity;
  /** Timers of this process that fired. */
  fired = 0;
  /** The most that fired within one virtual second. */
  busiestSecond = 0;
  private secondStartedAt = -Infinity;
  private firedThisSecond = 0;

  constructor(scheduler: VirtualScheduler, name: string) {
    this.scheduler = scheduler;
    this.name = name;
  }

  after(delayMs: number, callback: () => void): () => void {
    if (this.crashed) return () => undefined;
    // As Node's setTimeout: a delay under 1 ms waits 1 ms.
    return this.scheduler.enqueue(this, Math.max(1, delayMs), callback);
  }

  /** Counts one fired timer at `now`. */
  countFired(now: number): void {
    this.fired += 1;
    if (now - this.secondStartedAt >= 1000) {
      this.secondStartedAt = now;
      this.firedThisSecond = 0;
    }
    this.firedThisSecond += 1;
    this.busiestSecond = Math.max(this.busiestSecond, this.firedThisSecond);
  }

  /** The process dies: none of its timers fires again. */
  crash(): void {
    this.crashed = true;
  }

  /** The process is stopped (SIGSTOP) until `until`; its timers fire after that. */
  pauseUntil(until: number): void {
    this.frozenUntil = Math.max(this.frozenUntil, until);
  }

  get isPaused(): boolean {
    return this.scheduler.now < this.frozenUntil;
  }

  /** Resolves after `delayMs` of virtual time (never, once crashed). */
  sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => this.after(delayMs, resolve));
  }
}

/** The virtual clock and the one queue of every process's timers. */
export class VirtualScheduler {
  /** Virtual epoch milliseconds. */
  now: number;
  /** Timers fired so far. */
  events = 0;
  private readonly queue = new TimerQueue();
  private seq = 0;
  private readonly onEvent: (group: TimerGroup, seq: number) => void;

  constructor(options: { startAt: number; onEvent?: (group: TimerGroup, seq: number) => void }) {
    this.now = options.startAt;
    this.onEvent = options.onEvent ?? (() => undefined);
  }

  group(name: string): TimerGroup {
    return new TimerGroup(this, name);
  }

  enqueue(group: TimerGroup, delayMs: number, callback: () => void): () => void {
    const item: QueuedTimer = { at: this.now + delayMs, seq: this.seq++, group, callback, cancelled: false };
    this.queue.push(item);
    return () => {
      item.cancelled = true;
    };
  }

  /**
   * Runs timers in time order, letting all work settle after each, until
   * `isDone()` holds, nothing is left to run, or time passes `untilAt`.
   * Returns why it stopped.
   */
  async run(isDone: () => boolean, untilAt: number): Promise<"done" | "idle" | "horizon" | "spin"> {
    for (;;) {
      await settle();
      if (isDone()) return "done";
      const next = this.queue.pop();
      if (next === undefined) return "idle";
      if (next.cancelled || next.group.crashed) continue;
      if (next.group.frozenUntil > next.at) {
        // Held by a pause: it fires when the process runs again, after what was due before.
        next.at = next.group.frozenUntil;
        next.seq = this.seq++;
        this.queue.push(next);
        continue;
      }
      if (next.at > untilAt) {
        this.queue.push(next);
        return "horizon";
      }
      // A run this busy has a process waking every millisecond or so for nothing.
      if (this.events >= maxEventsPerRun) {
        this.queue.push(next);
        return "spin";
      }
      this.now = Math.max(this.now, next.at);
      this.events += 1;
      next.group.countFired(this.now);
      this.onEvent(next.group, next.seq);
      next.callback();
    }
  }
}
