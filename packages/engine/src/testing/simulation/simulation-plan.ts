/**
 * What one simulation run does, drawn from its seed alone: how many Workers
 * with what concurrency, the orders and when they start, RPCs, store
 * latency and fault rates, and the crashes and pauses of the chaos phase.
 */
import { seededRandom } from "../seeded-random.ts";

/** `safety`: faults until the end, only safety invariants. `liveness`: faults stop, then every Flow must finish in bounded time. */
export type SimulationMode = "safety" | "liveness";

export type ChaosEvent =
  | { kind: "crash"; at: number; worker: number; restartAfterMs: number; sameWorkerId: boolean }
  | { kind: "pause"; at: number; worker: number; durationMs: number };

export interface ClientOperation {
  at: number;
  kind: "start" | "note" | "poke";
  order: number;
}

export interface SimulationPlan {
  seed: number;
  mode: SimulationMode;
  workers: number;
  concurrency: number;
  livenessTimeoutMs: number;
  pollIntervalMs: number;
  orders: { napMs: number }[];
  client: ClientOperation[];
  chaos: ChaosEvent[];
  /** Virtual milliseconds of chaos from the start of the run. */
  chaosMs: number;
  transactionFaultRate: number;
  methodFaultRate: number;
  /** Share of transactions that meet a slow store (a latency spike). */
  spikeRate: number;
  /**
   * Processes use the store's one-request operations (Step commits, claims
   * and starts in one request each, as the SQLite store offers them), and
   * the Client's RPCs go through the first Worker's process, so what they
   * ready is claimed for that Worker in the RPC's own transaction. Otherwise
   * every process takes the general transaction paths. Odd seeds do; the
   * flag is the seed's parity, so every other draw of a seed stays as it was.
   */
  oneRequest: boolean;
}

/** Draws the plan of `seed`. */
export function planSimulation(seed: number, mode: SimulationMode): SimulationPlan {
  const random = seededRandom(seed ^ 0x5eed);
  const integer = (from: number, to: number): number => from + Math.floor(random() * (to - from + 1));
  const workers = integer(1, 4);
  const chaosMs = integer(3000, 15_000);
  const orders = Array.from({ length: integer(2, 8) }, () => ({ napMs: integer(0, 2000) }));
  const client: ClientOperation[] = orders.map((_order, order) => ({ at: integer(0, 3000), kind: "start" as const, order }));
  for (let index = integer(0, 8); index > 0; index--) client.push({ at: integer(0, chaosMs), kind: random() < 0.6 ? "note" : "poke", order: integer(0, orders.length - 1) });
  client.sort((first, second) => first.at - second.at);
  const chaos: ChaosEvent[] = [];
  for (let index = integer(0, 3); index > 0; index--) {
    chaos.push({ kind: "crash", at: integer(0, chaosMs), worker: integer(0, workers - 1), restartAfterMs: integer(0, 3000), sameWorkerId: random() < 0.5 });
  }
  for (let index = integer(0, 3); index > 0; index--) {
    chaos.push({ kind: "pause", at: integer(0, chaosMs), worker: integer(0, workers - 1), durationMs: integer(100, 5000) });
  }
  chaos.sort((first, second) => first.at - second.at);
  const faulty = random() < 0.75;
  return {
    seed,
    mode,
    workers,
    concurrency: integer(1, 4),
    // Idle polls and liveness ticks are most of a run's work: long enough to keep runs cheap, short enough for many takeovers.
    livenessTimeoutMs: random() < 0.5 ? 2000 : 3000,
    pollIntervalMs: integer(2, 5) * 100,
    orders,
    client,
    chaos,
    chaosMs,
    transactionFaultRate: faulty ? random() * 0.2 : 0,
    methodFaultRate: faulty && random() < 0.5 ? random() * 0.03 : 0,
    spikeRate: random() * 0.05,
    oneRequest: seed % 2 === 1,
  };
}
