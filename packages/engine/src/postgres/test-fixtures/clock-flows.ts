/**
 * Flow types of the clock-skew test. Handlers log the real time (the
 * monotonic clock from the process's start, which no wall-clock skew moves),
 * so the test can tell when a Timer really fired.
 */
import { appendFileSync } from "node:fs";
import { anyOf, attribute, completeFlow, defineFlow, defineStep, timer } from "../../index.ts";
import type { FlowCore, FlowDefinition } from "../../index.ts";
import { mixedFlow } from "../../worker/crash-fixtures/flows.ts";

/** Input of {@link timerFlow}. */
export interface TimerFlowInput {
  logPath: string;
  afterMs: number;
}

/** One line of the clock log. */
export interface ClockLogEntry {
  flowId: string;
  event: "asked" | "fired";
  pid: number;
  /** Real epoch milliseconds, whatever this process's wall clock says. */
  realAt: number;
}

/** The real time: the process's start plus its monotonic clock. */
export function realNow(): number {
  return performance.timeOrigin + performance.now();
}

function log(path: string, entry: Omit<ClockLogEntry, "pid" | "realAt">): void {
  appendFileSync(path, `${JSON.stringify({ ...entry, pid: process.pid, realAt: realNow() })}\n`);
}

const Nap = defineStep<TimerFlowInput>("Nap", {
  waitUntil: (context, input) => {
    log(input.logPath, { flowId: context.flowId, event: "asked" });
    return anyOf(timer("nap", { afterMs: input.afterMs }));
  },
  execute: (context, input) => {
    log(input.logPath, { flowId: context.flowId, event: "fired" });
    return completeFlow();
  },
});

/** A Flow that waits on one Timer of `afterMs`, set by whichever Worker asks. */
export const timerFlow: FlowDefinition<Record<string, never>> = defineFlow({ type: "ClockTimer", start: "Nap", steps: [Nap], persistence: {} });

/** What a Step of {@link clockReadingFlow} saw of the clocks. */
export interface ClockReading {
  /** `context.deadline.getTime() - Date.now()`: the time left as a handler on this machine computes it. */
  timeLeftMs: number;
  /** `context.now()`: the store's clock. */
  storeNow: number;
  /** The real time when it read them. */
  realAt: number;
}

/** Where {@link clockReadingFlow} stores its reading. */
export const clockReading = attribute<ClockReading>("ClockReading");

const Read = defineStep("Read", {
  execute: (context) => {
    context.write(clockReading, { timeLeftMs: context.deadline.getTime() - Date.now(), storeNow: context.now(), realAt: realNow() });
    return completeFlow();
  },
});

/** A Flow whose one Step, with the default method timeout, records what it sees of the clocks. */
export const clockReadingFlow: FlowDefinition<Record<string, never>> = defineFlow({ type: "ClockReading", start: "Read", steps: [Read], persistence: { clockReading } });

/** What the clock-test Worker process hosts. */
export const clockFlows: readonly FlowCore[] = [mixedFlow, timerFlow, clockReadingFlow];
