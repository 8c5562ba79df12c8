/**
 * The agent-turn workload of the peer comparison (issue 40): a session of
 * turns, each one user message, 3 model calls of a scripted model that
 * answers at once and 2 tool calls (a read, then an idempotent write),
 * timed from the user's message to the committed end of the turn. One
 * session at a time for latency, then many sessions at once for throughput.
 */
import { median } from "../engine/support.ts";
import { percentile } from "../agents/session-bench.ts";

/** One agent system under test. */
export interface AgentTurnSystem {
  /** Row label, such as "Perdure PostgreSQL" or "DBOS 5.3 (PostgreSQL)". */
  readonly name: string;
  /** Prepares a session that takes turns. */
  startSession(sessionId: string): Promise<void>;
  /** Runs turn `turnNumber` of a session to its committed end. */
  runTurn(sessionId: string, turnNumber: number): Promise<void>;
  /** Bytes the system's store holds on disk now. */
  bytesStored?(): Promise<number>;
  close(): Promise<void>;
}

export interface TurnRound {
  /** Per-turn milliseconds of one session, p50 and p99. */
  p50Ms: number;
  p99Ms: number;
  /** Turns per second with `sessions` sessions taking turns at once. */
  turnsPerSecondBySessions: Record<string, number>;
}

let serial = 0;

export function nextSessionId(prefix: string): string {
  serial += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${serial}`;
}

/** Runs `turns` turns on a fresh session; returns each turn's milliseconds. */
export async function timeOneSession(system: AgentTurnSystem, turns: number): Promise<number[]> {
  const sessionId = nextSessionId("latency");
  await system.startSession(sessionId);
  const times: number[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    const startedAt = performance.now();
    await system.runTurn(sessionId, turn);
    times.push(performance.now() - startedAt);
  }
  return times;
}

/** Turns per second with `sessions` fresh sessions, each taking `turns` turns one after another. */
export async function measureSessionsThroughput(system: AgentTurnSystem, sessions: number, turns: number): Promise<number> {
  const ids = Array.from({ length: sessions }, () => nextSessionId(`throughput-${sessions}`));
  await Promise.all(ids.map((id) => system.startSession(id)));
  const startedAt = performance.now();
  await Promise.all(ids.map(async (id) => {
    for (let turn = 1; turn <= turns; turn++) await system.runTurn(id, turn);
  }));
  return (sessions * turns) / ((performance.now() - startedAt) / 1000);
}

export interface TurnSettings {
  /** Turns of the one-session part (the 20-turn session), run `latencySessions` times. */
  turnsPerSession: number;
  latencySessions: number;
  sessionCounts: readonly number[];
}

export async function measureTurnRound(system: AgentTurnSystem, settings: TurnSettings): Promise<TurnRound> {
  const times: number[] = [];
  for (let index = 0; index < settings.latencySessions; index++) times.push(...await timeOneSession(system, settings.turnsPerSession));
  const turnsPerSecondBySessions: Record<string, number> = {};
  for (const sessions of settings.sessionCounts) {
    turnsPerSecondBySessions[String(sessions)] = await measureSessionsThroughput(system, sessions, settings.turnsPerSession);
  }
  return { p50Ms: median(times), p99Ms: percentile(times, 99), turnsPerSecondBySessions };
}
