/**
 * Flow types of the crash tests, imported by the test process (to start Flows
 * and read Attributes) and by the Worker child processes (to run them).
 *
 * Handlers record what really happened outside the database in an
 * append-only file log (one JSON line per event), so a test can count handler
 * starts that the store cannot see. A handler may pause at a file gate until
 * the test creates the gate file; the test kills the Worker while it waits.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { attribute, attributeMap, completeFlow, defineFlow, defineStep, moveTo } from "../../index.ts";
import type { FlowCore, FlowDefinition, RecoveryError, StepContext } from "../../index.ts";

/** One line of the file log. */
export interface LogEntry {
  at: number;
  pid: number;
  flowId: string;
  step: string;
  /** `start` when a handler begins; other events are Step-specific. */
  event: string;
  attempt: number;
  checkpoint?: string | null;
}

/** Appends one event; `appendFileSync` writes each line with one O_APPEND write, safe across processes. */
export function logEvent(logPath: string, context: StepContext, event: string, extra: Partial<LogEntry> = {}): void {
  const entry: LogEntry = { at: Date.now(), pid: process.pid, flowId: context.flowId, step: context.stepType, event, attempt: context.attempt, ...extra };
  appendFileSync(logPath, `${JSON.stringify(entry)}\n`);
}

/** Every entry of the file log, oldest first. */
export function readLog(logPath: string): LogEntry[] {
  if (!existsSync(logPath)) return [];
  return readFileSync(logPath, "utf8").split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as LogEntry);
}

/** Waits until the gate file exists: the handler is parked here, at an exact point, for the test to kill it. */
export async function waitForGate(gatePath: string): Promise<void> {
  while (!existsSync(gatePath)) await delay(10);
}

const fastRetry = { initialIntervalMs: 50, backoffCoefficient: 1, maximumAttempts: 5 };

/** Input of the single-Flow crash scenarios (a), (b) and (c). */
export interface GatedInput {
  logPath: string;
  gatePath: string;
}

// (a) A retried Step killed before any heartbeat. ---------------------------

/** Incremented by the commit of each Step of {@link retriedFlow}. */
export const counter = attribute<number>("Counter");

const CountFirst = defineStep<GatedInput>("CountFirst", {
  execute: (context, input) => {
    logEvent(input.logPath, context, "start");
    context.write(counter, (context.read(counter) ?? 0) + 1);
    return moveTo("CountGated", input);
  },
  executeOptions: { retry: fastRetry },
});

const CountGated = defineStep<GatedInput>("CountGated", {
  execute: async (context, input) => {
    logEvent(input.logPath, context, "start");
    await waitForGate(input.gatePath);
    const value = (context.read(counter) ?? 0) + 1;
    context.write(counter, value);
    return completeFlow({ counter: value });
  },
  executeOptions: { retry: fastRetry },
});

/** CountFirst then CountGated, each adding one to {@link counter} at commit. */
export const retriedFlow: FlowDefinition<{ counter: typeof counter }> = defineFlow({
  type: "CrashRetried",
  start: "CountFirst",
  steps: [CountFirst, CountGated],
  persistence: { counter },
});

// (b) A Step killed after a heartbeat with a checkpoint. --------------------

/** The checkpoint the completing attempt resumed from (null: it started fresh). */
export const resumedFrom = attribute<string | null>("ResumedFrom");
const phases = ["step-1", "step-2", "step-3", "step-4"];

const Phased = defineStep<GatedInput>("Phased", {
  execute: async (context, input) => {
    const checkpoint = context.heartbeatCheckpoint;
    logEvent(input.logPath, context, "start", { checkpoint: checkpoint ?? null });
    for (const phase of phases.slice(checkpoint === undefined ? 0 : phases.indexOf(checkpoint) + 1)) {
      logEvent(input.logPath, context, `did ${phase}`);
      if (phase === "step-4") break;
      await context.heartbeat(phase);
      logEvent(input.logPath, context, `checkpointed ${phase}`);
      if (phase === "step-3") await waitForGate(input.gatePath);
    }
    context.write(resumedFrom, checkpoint ?? null);
    return completeFlow({ resumedFrom: checkpoint ?? null });
  },
  executeOptions: { retry: fastRetry },
});

/** One Step doing four phases, heartbeating a checkpoint after each of the first three. */
export const checkpointFlow: FlowDefinition<{ resumedFrom: typeof resumedFrom }> = defineFlow({
  type: "CrashCheckpoint",
  start: "Phased",
  steps: [Phased],
  persistence: { resumedFrom },
});

// (c) A single-attempt Step killed mid-handler. ------------------------------

/** Set by the single-attempt Step's commit. */
export const charged = attribute<boolean>("Charged");
/** The recovery error the recovery Step received. */
export const recovery = attribute<RecoveryError>("Recovery");

const ChargeOnce = defineStep<GatedInput>("ChargeOnce", {
  execute: async (context, input) => {
    logEvent(input.logPath, context, "start");
    await waitForGate(input.gatePath);
    context.write(charged, true);
    return completeFlow({ charged: true });
  },
  executeOptions: { retry: { maximumAttempts: 1 } },
  failureRoute: "Recover",
});

const Recover = defineStep<GatedInput>("Recover", {
  execute: (context, input) => {
    logEvent(input.logPath, context, "start");
    if (context.recoveryError !== undefined) context.write(recovery, context.recoveryError);
    return completeFlow({ recovered: true });
  },
  executeOptions: { retry: fastRetry },
});

/** A single-attempt Step whose failure route is Recover. */
export const singleAttemptFlow: FlowDefinition<{ charged: typeof charged; recovery: typeof recovery }> = defineFlow({
  type: "CrashSingleAttempt",
  start: "ChargeOnce",
  steps: [ChargeOnce, Recover],
  persistence: { charged, recovery },
});

// (d) Many Flows, each: Reserve (retried) -> Charge (single attempt) -> Ship (retried, heartbeats). ----

/** Input of {@link mixedFlow}. */
export interface MixedInput {
  logPath: string;
  /** Handler pause range in ms, so kills land inside handlers. */
  minPauseMs: number;
  maxPauseMs: number;
}

/** Incremented once by Reserve's and once by Ship's commit: 2 at the end. */
export const mixedCounter = attribute<number>("MixedCounter");
/** One instance per committed attempt, keyed `<Step>@<attempt>`: a second commit of a Step adds a second key. */
export const commits = attributeMap<number>("Commits");
/** Set by Charge's commit. */
export const mixedCharged = attribute<boolean>("MixedCharged");
/** The recovery error ChargeRecover received. */
export const mixedRecovery = attribute<RecoveryError>("MixedRecovery");

function pause(input: MixedInput): Promise<void> {
  return delay(input.minPauseMs + Math.floor(Math.random() * (input.maxPauseMs - input.minPauseMs + 1)));
}

function commitOnce(context: StepContext): void {
  context.write(mixedCounter, (context.read(mixedCounter) ?? 0) + 1);
  context.write(commits.instance(`${context.stepType}@${context.attempt}`), Date.now());
}

const mixedRetry = { initialIntervalMs: 20, backoffCoefficient: 1, maximumAttempts: 50 };

const Reserve = defineStep<MixedInput>("Reserve", {
  execute: async (context, input) => {
    logEvent(input.logPath, context, "start");
    await pause(input);
    commitOnce(context);
    logEvent(input.logPath, context, "end");
    return moveTo("Charge", input);
  },
  executeOptions: { retry: mixedRetry },
});

const Charge = defineStep<MixedInput>("Charge", {
  execute: async (context, input) => {
    // The external effect: it must happen at most once per Flow.
    logEvent(input.logPath, context, "start");
    await pause(input);
    context.write(mixedCharged, true);
    logEvent(input.logPath, context, "end");
    return moveTo("Ship", input);
  },
  executeOptions: { retry: { maximumAttempts: 1 } },
  failureRoute: "ChargeRecover",
});

const ChargeRecover = defineStep<MixedInput>("ChargeRecover", {
  execute: (context, input) => {
    logEvent(input.logPath, context, "start");
    if (context.recoveryError !== undefined) context.write(mixedRecovery, context.recoveryError);
    logEvent(input.logPath, context, "end");
    return moveTo("Ship", input);
  },
  executeOptions: { retry: mixedRetry },
});

const Ship = defineStep<MixedInput>("Ship", {
  execute: async (context, input) => {
    const checkpoint = context.heartbeatCheckpoint;
    logEvent(input.logPath, context, "start", { checkpoint: checkpoint ?? null });
    if (checkpoint !== "packed") {
      await pause(input);
      await context.heartbeat("packed");
      logEvent(input.logPath, context, "packed");
    }
    await pause(input);
    commitOnce(context);
    logEvent(input.logPath, context, "end");
    return completeFlow({ shipped: true });
  },
  executeOptions: { retry: mixedRetry },
});

/** The Flow of the many-Flows random-kill test. */
export const mixedFlow: FlowDefinition<{
  mixedCounter: typeof mixedCounter; commits: typeof commits; mixedCharged: typeof mixedCharged; mixedRecovery: typeof mixedRecovery;
}> = defineFlow({
  type: "CrashMixed",
  start: "Reserve",
  steps: [Reserve, Charge, ChargeRecover, Ship],
  persistence: { mixedCounter, commits, mixedCharged, mixedRecovery },
});

/** Every Flow type the crash-test Worker process hosts. */
export const crashFlows: readonly FlowCore[] = [retriedFlow, checkpointFlow, singleAttemptFlow, mixedFlow];
