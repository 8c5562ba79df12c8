/**
 * One deterministic simulation run: several Workers and a Client in this
 * process, on one SQLite file, on virtual time. Each process reaches the
 * store through its own fault-injecting, latency-adding, crashable handle;
 * the plan (from the seed) crashes, restarts and pauses Workers. Afterwards
 * the invariants are checked. The same seed gives the same run, event for
 * event: the trace hash proves it.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../../client/client.ts";
import type { LogFields, PerdureLogger } from "../../logging/perdure-logger.ts";
import { SqliteStore } from "../../sqlite/sqlite-store.ts";
import type { StoreClock } from "../../store/store-clock.ts";
import { withWorkerTimers } from "../../internal/local-timers.ts";
import { Worker } from "../../worker/worker.ts";
import { FaultInjectingStore } from "../fault-injecting-store.ts";
import { seededRandom } from "../seeded-random.ts";
import { SimulatedProcessStore, type AcknowledgedWrite } from "./simulated-process-store.ts";
import { checkLiveness, checkSafety, readOrders } from "./simulation-check.ts";
import { planSimulation, type SimulationMode, type SimulationPlan } from "./simulation-plan.ts";
import { simulatedOrderFlow, trackedAttributeNames, type HandlerEffect } from "./simulation-workload.ts";
import { VirtualScheduler, type TimerGroup } from "./virtual-scheduler.ts";

/** How long after the chaos phase every Flow must have finished, in virtual milliseconds. */
export const livenessBoundMs = 60_000;
/** More timers than this in one virtual second of one process is a hot loop (Node's timers wait at least 1 ms). */
const maxTimersPerProcessSecond = 500;
/** How long a safety run goes on after its chaos phase, in virtual milliseconds. */
const safetyTailMs = 20_000;

/** What a run produced. */
export interface SimulationResult {
  seed: number;
  mode: SimulationMode;
  violations: string[];
  /** SHA-256 of the run's trace: equal for equal seeds. */
  traceHash: string;
  /** The last trace lines, for a failure report. */
  traceTail: string[];
  stats: {
    events: number;
    transactions: number;
    faults: number;
    crashes: number;
    pauses: number;
    orders: number;
    finished: number;
    virtualMs: number;
    /** The most timers one process fired within one virtual second. */
    busiestSecond: number;
  };
}

/** A virtual start time: any fixed instant will do. */
const startAt = Date.UTC(2026, 0, 1);

function temporaryFolder(): string {
  // Memory-backed when the machine has it: a run writes a few hundred small transactions.
  return mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "perdure-sim-"));
}

/** Runs the plan of `seed` in `mode` (with `pinned`'s choices where given) and checks it. */
export async function runSimulation(seed: number, mode: SimulationMode, pinned: { oneRequest?: boolean | undefined } = {}): Promise<SimulationResult> {
  const drawn = planSimulation(seed, mode);
  const plan = { ...drawn, oneRequest: pinned.oneRequest ?? drawn.oneRequest };
  const folder = temporaryFolder();
  const shared = SqliteStore.open({ path: join(folder, "sim.db"), durability: "process-crash-safe", pollIntervalMs: plan.pollIntervalMs });
  try {
    return await runPlan(plan, shared);
  } finally {
    await shared.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function runPlan(plan: SimulationPlan, shared: SqliteStore): Promise<SimulationResult> {
  const hash = createHash("sha256");
  const traceTail: string[] = [];
  const trace = (line: string): void => {
    const stamped = `${scheduler.now - startAt} ${line}`;
    hash.update(stamped).update("\n");
    traceTail.push(stamped);
    if (traceTail.length > 400) traceTail.splice(0, 200);
  };
  const scheduler: VirtualScheduler = new VirtualScheduler({ startAt, onEvent: (group, seq) => trace(`timer ${group.name} #${seq}`) });
  const clock: StoreClock = { now: () => scheduler.now };
  const effects: HandlerEffect[] = [];
  const acknowledged: AcknowledgedWrite[] = [];
  const faultyStores: FaultInjectingStore[] = [];
  const groups: TimerGroup[] = [];
  let faultsOn = plan.transactionFaultRate > 0 || plan.methodFaultRate > 0;
  let processes = 0;
  let transactions = 0;

  /** A simulated process: its timers, its faulty store handle, its copy of the Flow. */
  const spawnProcess = (name: string) => {
    const timers = scheduler.group(name);
    groups.push(timers);
    const faulty = new FaultInjectingStore(shared, {
      seed: (plan.seed * 31 + processes++) | 0,
      transactionFaultRate: plan.transactionFaultRate,
      methodFaultRate: plan.methodFaultRate,
      injecting: faultsOn,
      oneRequest: plan.oneRequest,
    });
    faultyStores.push(faulty);
    const latencyRandom = seededRandom((plan.seed * 7919 + processes) | 0);
    const store = new SimulatedProcessStore({
      inner: faulty,
      timers,
      clock,
      latencyMs: () => {
        transactions += 1;
        const spike = latencyRandom() < plan.spikeRate;
        return spike ? 200 + Math.floor(latencyRandom() * 2000) : Math.floor(latencyRandom() * 4);
      },
      pollIntervalMs: plan.pollIntervalMs,
      trackedNames: trackedAttributeNames,
      acknowledged,
      trace,
    });
    const flow = simulatedOrderFlow({ process: name, sleep: (delayMs) => timers.sleep(delayMs), effects, seed: plan.seed });
    return { timers, store, flow };
  };

  // The shared store never loses a commit: a Worker that reports lost commits raises a false alarm.
  const falseAlarms: string[] = [];
  const alarmListener = (name: string): PerdureLogger => {
    const heard = (_fields: LogFields, message: string): void => {
      if (/went back in time|lost committed work|lost its commits/.test(message)) falseAlarms.push(`${name}: ${message}`);
    };
    return { debug: () => undefined, info: () => undefined, warn: heard, error: heard };
  };

  // Workers: each slot holds its current incarnation.
  const slots: { timers: TimerGroup; workerId: string; incarnation: number; store: SimulatedProcessStore; flow: ReturnType<typeof spawnProcess>["flow"] }[] = [];
  const startWorker = (slot: number, workerId: string, incarnation: number): void => {
    const { timers, store, flow } = spawnProcess(`w${slot}.${incarnation}`);
    slots[slot] = { timers, workerId, incarnation, store, flow };
    const worker = new Worker(withWorkerTimers({
      store,
      flows: [flow],
      workerId,
      concurrency: plan.concurrency,
      livenessTimeoutMs: plan.livenessTimeoutMs,
      pollIntervalMs: plan.pollIntervalMs,
      onError: (error: unknown) => trace(`${timers.name} error ${String((error as { message?: unknown } | null)?.message ?? error)}`),
      logger: alarmListener(timers.name),
    }, timers));
    // A start that meets a fault ends the process; a supervisor starts it again.
    worker.start().then(() => trace(`${timers.name} started as ${workerId}`), (error: unknown) => {
      trace(`${timers.name} start failed: ${String((error as { message?: unknown } | null)?.message ?? error)}`);
      timers.crash();
      controller.after(100, () => startWorker(slot, workerId, incarnation + 1));
    });
  };

  const controller = scheduler.group("controller");
  for (let slot = 0; slot < plan.workers; slot++) startWorker(slot, `w${slot}`, 0);

  // The Client: starts every order (retrying until acknowledged), adds notes and pokes.
  const clientProcess = spawnProcess("client");
  const client = new Client({ store: clientProcess.store });
  const flowIds = plan.orders.map((_order, index) => `order-${index}`);
  const acknowledgedStarts = new Set<string>();
  /** Where a start or an RPC is made: with `oneRequest`, in the first Worker's current process, whose Worker its request may claim for. */
  const rpcCaller = (): { client: Client; flow: typeof clientProcess.flow } => {
    const first = slots[0];
    if (!plan.oneRequest || first === undefined) return { client, flow: clientProcess.flow };
    return { client: new Client({ store: first.store }), flow: first.flow };
  };
  const home = { client, flow: clientProcess.flow };
  const startOrder = (order: number, caller = rpcCaller()): void => {
    const flowId = flowIds[order]!;
    let settled = false;
    caller.client.start(caller.flow, flowId, plan.orders[order], { requestId: `start-${flowId}` }).then(() => {
      settled = true;
      acknowledgedStarts.add(flowId);
    }, () => {
      settled = true;
      clientProcess.timers.after(100, () => startOrder(order, home));
    });
    // A Worker's process that dies meanwhile hears no reply: the client process starts it again (one start, by its request ID).
    if (caller.client !== client) clientProcess.timers.after(3000, () => {
      if (!settled) startOrder(order, home);
    });
  };
  plan.client.forEach((operation, index) => {
    clientProcess.timers.after(operation.at, () => {
      const flowId = flowIds[operation.order]!;
      if (operation.kind === "start") {
        startOrder(operation.order);
        return;
      }
      const caller = rpcCaller();
      if (operation.kind === "note") caller.client.invokeRPC(caller.flow.addNote, flowId, { key: `note-${index}`, text: `note ${index}` }).catch(() => undefined);
      else caller.client.invokeRPC(caller.flow.poke, flowId, `poke ${index}`).catch(() => undefined);
    });
  });

  // Chaos: crashes (with restarts) and pauses.
  let crashes = 0;
  let pauses = 0;
  for (const event of plan.chaos) {
    controller.after(event.at, () => {
      const slot = slots[event.worker]!;
      if (slot.timers.crashed) return;
      if (event.kind === "pause") {
        pauses += 1;
        trace(`pause ${slot.timers.name} for ${event.durationMs} ms`);
        slot.timers.pauseUntil(scheduler.now + event.durationMs);
        return;
      }
      crashes += 1;
      trace(`crash ${slot.timers.name}`);
      slot.timers.crash();
      const incarnation = slot.incarnation + 1;
      const workerId = event.sameWorkerId ? slot.workerId : `w${event.worker}-${incarnation}`;
      controller.after(event.restartAfterMs, () => startWorker(event.worker, workerId, incarnation));
    });
  }
  if (plan.mode === "liveness") {
    controller.after(plan.chaosMs, () => {
      trace("chaos ends");
      faultsOn = false;
      for (const faulty of faultyStores) faulty.injecting = false;
    });
  }

  // Done once every order finished: looked up now and then, straight from the store.
  let finished = 0;
  const isDone = (): boolean => finished === flowIds.length;
  const look = (): void => {
    void shared.transaction(async (transaction) => {
      const statuses = await Promise.all(flowIds.map((flowId) => transaction.lockFlow(flowId).then((row) => row?.status)));
      return statuses.filter((status) => status !== undefined && status !== "running").length;
    }).then((count) => {
      finished = count;
      if (!isDone()) controller.after(500, look);
    });
  };
  controller.after(500, look);
  const horizon = startAt + plan.chaosMs + (plan.mode === "liveness" ? livenessBoundMs : safetyTailMs);
  const runViolations: string[] = [];
  const stopped = await scheduler.run(isDone, horizon);
  trace(`stopped: ${stopped}`);
  if (stopped === "spin") runViolations.push(`a busy loop: ${scheduler.events} timers fired by virtual time ${scheduler.now - startAt} ms`);
  // Everything stops here: no timer fires again.
  for (const slot of slots) slot.timers.crash();
  clientProcess.timers.crash();
  controller.crash();

  const orders = await readOrders(shared, flowIds);
  const violations = [...runViolations, ...checkSafety(orders, effects, acknowledged, acknowledgedStarts), ...falseAlarms.map((alarm) => `a false alarm of lost commits: ${alarm}`)];
  for (const group of groups) {
    // A healthy process fires tens of timers a second; hundreds means it polls in a hot loop.
    if (group.busiestSecond > maxTimersPerProcessSecond) violations.push(`a busy loop: ${group.name} fired ${group.busiestSecond} timers within one virtual second`);
  }
  if (plan.mode === "liveness") violations.push(...checkLiveness(orders, flowIds));
  for (const order of orders) trace(`final ${order.flowId} ${String(order.status)} ${order.history.map((entry) => `${entry.stepType}/${entry.method}/${entry.attempt}/${entry.status}`).join(",")}`);
  return {
    seed: plan.seed,
    mode: plan.mode,
    violations,
    traceHash: hash.digest("hex"),
    traceTail,
    stats: {
      events: scheduler.events,
      transactions,
      faults: faultyStores.reduce((sum, faulty) => sum + faulty.injectedTotal, 0),
      crashes,
      pauses,
      orders: flowIds.length,
      finished: orders.filter((order) => order.status !== undefined && order.status !== "running").length,
      virtualMs: scheduler.now - startAt,
      busiestSecond: Math.max(...groups.map((group) => group.busiestSecond)),
    },
  };
}
