/**
 * Flow types of the clock-skew test. Handlers log the real time (the
 * monotonic clock from the process's start, which no wall-clock skew moves),
 * so the test can tell when a Timer really fired.
 */
import { appendFileSync } from "node:fs";
import { anyOf, completeFlow, defineFlow, defineStep, timer } from "../../index.ts";
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

/** What the clock-test Worker process hosts. */
export const clockFlows: readonly FlowCore[] = [mixedFlow, timerFlow];
