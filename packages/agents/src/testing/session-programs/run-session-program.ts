/**
 * Runs a session program for real and hands what it left to the oracle:
 * in Worker child processes on a private SQLite engine, with no kill or one
 * SIGKILL at a chosen durable boundary (through the boundary-kill loop of
 * `@perdure/engine/testing`), or in this process on a store that fails a
 * seeded share of its transactions.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as delay } from "node:timers/promises";
import { Client, Worker } from "@perdure/engine";
import { FaultInjectingStore, runBoundaryKillLoop, type BoundaryKillRunReport, type BoundaryKillScenario } from "@perdure/engine/testing";
import type { AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { KillableWorkerProcess } from "../killable-worker-process.ts";
import { PrivateEngine } from "../private-engine.ts";
import { checkSessionProgram, type SessionProgramVerdict } from "./check-session-program.ts";
import { driveProgramApprovals } from "./drive-program-approvals.ts";
import { describeSessionProgramState, isSessionProgramAtRest, observeSessionProgram } from "./observe-session-program.ts";
import type { ProgramRunMode } from "./program-outcomes.ts";
import { createSessionProgramFlow, sessionProgramFlowId } from "./session-program-flow.ts";
import { sessionProgramSeedEnvironmentVariable, sessionProgramToolLogEnvironmentVariable, sessionProgramWorkerId } from "./session-program-process.ts";
import type { SessionProgram } from "./session-program.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/session-program-worker-main.ts", import.meta.url));

/** What one run of a program found. */
export interface SessionProgramRunResult {
  mode: ProgramRunMode;
  /** The boundary the run was to kill at; undefined for a fault run. */
  killAtBoundary: number | undefined;
  /** Where the kill struck (`worker.commit.before-commit CallSingleAttemptTool`); undefined when none did. */
  killedAt: string | undefined;
  /** Durable boundaries the first Worker process reached (the fatal one included). */
  boundariesReached: number;
  /** Store faults injected, by kind (fault runs). */
  faultsInjected: Record<string, number>;
  /** True when faults had to be switched off before the session came to rest. */
  faultsStopped: boolean;
  violations: string[];
  degradedCalls: string[];
  degradedTurns: string[];
  durationMs: number;
}

/** Starts the session with the first turn's message and queues the others, which start one turn each, in order. */
async function sendUserMessages(client: Client, flow: AgentSessionFlow, program: SessionProgram): Promise<void> {
  const [first, ...rest] = program.turns;
  await client.start(flow, sessionProgramFlowId, { initial_message: first?.userText ?? "" });
  for (const turn of rest) {
    const accepted = await client.invokeRPC(flow.sendUserMessage, sessionProgramFlowId, { text: turn.userText });
    if (!accepted) throw new Error(`send_user_message refused the message of ${turn.turnId}`);
  }
}

interface ProcessRun {
  engine: PrivateEngine;
  client: Client;
  flow: AgentSessionFlow;
  toolLogPath: string;
  verdict: SessionProgramVerdict | undefined;
}

function processScenario(program: SessionProgram, verdicts: Map<number, { verdict: SessionProgramVerdict; mode: ProgramRunMode }>): BoundaryKillScenario<ProcessRun> {
  return {
    name: `session program ${program.seed}`,
    standsBy: true,
    setUp: async () => {
      const engine = await PrivateEngine.start();
      const toolLogPath = join(engine.directory, "tool-runs.log");
      return { engine, client: new Client({ store: engine.openStore() }), flow: createSessionProgramFlow(program, toolLogPath), toolLogPath, verdict: undefined };
    },
    startProcess: (run, start) => KillableWorkerProcess.start({
      entryModulePath,
      engineAddress: run.engine.address,
      environment: { ...start.environment, [sessionProgramSeedEnvironmentVariable]: String(program.seed), [sessionProgramToolLogEnvironmentVariable]: run.toolLogPath },
      readyTimeoutMs: start.readyTimeoutMs,
    }),
    begin: (run) => sendUserMessages(run.client, run.flow, program),
    isAtEnd: (run) => isSessionProgramAtRest(run.client, run.flow, sessionProgramFlowId, program.turns.length),
    readStepHistory: (run, flowId) => run.client.getStepHistory(flowId),
    describeState: (run) => describeSessionProgramState(run.client, run.flow, sessionProgramFlowId),
    checkInvariants: async (run, result) => {
      const observation = await observeSessionProgram(run.client, run.flow, sessionProgramFlowId, run.toolLogPath);
      const mode: ProgramRunMode = result.killedAt === undefined ? "exact" : "killed";
      const verdict = checkSessionProgram(program, observation, mode);
      verdicts.set(result.killAtBoundary, { verdict, mode });
      if (verdict.violations.length > 0) throw new Error(verdict.violations.join("\n"));
    },
    tearDown: (run) => run.engine.stop(),
  };
}

function resultOf(report: BoundaryKillRunReport, checked: { verdict: SessionProgramVerdict; mode: ProgramRunMode } | undefined): SessionProgramRunResult {
  return {
    mode: checked?.mode ?? (report.killedAt === undefined ? "exact" : "killed"),
    killAtBoundary: report.killAtBoundary,
    killedAt: report.killedAt === undefined ? undefined : `${report.killedAt.name}${report.killedAt.detail === null ? "" : ` ${report.killedAt.detail}`}`,
    boundariesReached: report.boundariesReached,
    faultsInjected: {},
    faultsStopped: false,
    violations: [...report.violations],
    degradedCalls: checked?.verdict.degradedCalls ?? [],
    degradedTurns: checked?.verdict.degradedTurns ?? [],
    durationMs: report.durationMs,
  };
}

/**
 * Runs `program` in Worker child processes, once per entry of
 * `killAtBoundaries`: the first process SIGKILLs itself at that durable
 * boundary and a replacement finishes the session; a boundary past the
 * run's last one means no kill, and the oracle then demands the exact
 * outcome. Runs go `concurrency` at a time, each on a fresh engine.
 */
export async function runSessionProgramInProcesses(program: SessionProgram, killAtBoundaries: readonly number[], options: { concurrency?: number } = {}): Promise<SessionProgramRunResult[]> {
  const results: SessionProgramRunResult[] = [];
  const queue = [...killAtBoundaries];
  const lane = async (): Promise<void> => {
    for (let boundary = queue.shift(); boundary !== undefined; boundary = queue.shift()) {
      const verdicts = new Map<number, { verdict: SessionProgramVerdict; mode: ProgramRunMode }>();
      const report = await runBoundaryKillLoop(processScenario(program, verdicts), { fromBoundary: boundary, toBoundary: boundary, failOnViolation: false });
      for (const run of report.runs) results.push(resultOf(run, verdicts.get(run.killAtBoundary)));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 1, queue.length)) }, lane));
  return results;
}

/** Options of {@link runSessionProgramWithStoreFaults}. */
export interface StoreFaultRunOptions {
  /** Seed of the fault schedules (the Worker's store and the approver's get different ones). */
  faultSeed: number;
  /** Share of transactions that fail. @default 0.05 */
  transactionFaultRate?: number;
  /** How long faults are injected before they stop, so the session must then finish (liveness). @default 30_000 */
  faultWindowMs?: number;
  /** How long the session may take to come to rest once faults stopped. @default 20_000 */
  settleTimeoutMs?: number;
}

/**
 * Runs `program` with a Worker and the approver in this process, each on a
 * `FaultInjectingStore` over the engine's SQLite file that fails a seeded
 * share of transactions (busy, I/O error, disk full, commit outcome
 * unknown). Faults stop once the session is at rest or the fault window
 * ends; a session not at rest `settleTimeoutMs` after that is stuck. The
 * oracle then checks the outcome the contract allows under store faults.
 */
export async function runSessionProgramWithStoreFaults(program: SessionProgram, options: StoreFaultRunOptions): Promise<SessionProgramRunResult> {
  const startedAt = performance.now();
  const engine = await PrivateEngine.start();
  const toolLogPath = join(engine.directory, "tool-runs.log");
  const flow = createSessionProgramFlow(program, toolLogPath);
  const rate = options.transactionFaultRate ?? 0.05;
  const workerStore = new FaultInjectingStore(engine.openStore(), { seed: options.faultSeed, transactionFaultRate: rate, injecting: false });
  const approverStore = new FaultInjectingStore(engine.openStore(), { seed: options.faultSeed + 1, transactionFaultRate: rate });
  const client = new Client({ store: engine.openStore() });
  const worker = new Worker({ store: workerStore, flows: [flow], workerId: sessionProgramWorkerId, concurrency: 8 });
  // The Worker registers on a sound store; its faults start once it runs.
  await worker.start();
  workerStore.injecting = true;
  const approvals = new AbortController();
  const approver = driveProgramApprovals(new Client({ store: approverStore }), flow, sessionProgramFlowId, program, approvals.signal);
  const violations: string[] = [];
  let faultsStopped = false;
  let verdict: SessionProgramVerdict | undefined;
  try {
    await sendUserMessages(client, flow, program);
    const atRest = (): Promise<boolean> => isSessionProgramAtRest(client, flow, sessionProgramFlowId, program.turns.length).catch(() => false);
    const waitForRest = async (timeoutMs: number): Promise<boolean> => {
      const deadline = performance.now() + timeoutMs;
      while (performance.now() < deadline) {
        if (await atRest()) return true;
        await delay(20);
      }
      return atRest();
    };
    if (!await waitForRest(options.faultWindowMs ?? 30_000)) {
      faultsStopped = true;
      workerStore.injecting = false;
      approverStore.injecting = false;
      if (!await waitForRest(options.settleTimeoutMs ?? 20_000)) {
        violations.push(`stuck: the session did not come to rest within ${options.settleTimeoutMs ?? 20_000} ms after faults stopped\nstate: ${await describeSessionProgramState(client, flow, sessionProgramFlowId)}`);
      }
    }
    workerStore.injecting = false;
    approverStore.injecting = false;
    approvals.abort();
    await approver;
    await worker.close();
    if (violations.length === 0) {
      try {
        verdict = checkSessionProgram(program, await observeSessionProgram(client, flow, sessionProgramFlowId, toolLogPath), "faulted");
        violations.push(...verdict.violations);
      } catch (error) {
        violations.push(error instanceof Error ? error.message : String(error));
      }
    }
  } finally {
    approvals.abort();
    await worker.close().catch(() => undefined);
    await engine.stop();
  }
  const faultsInjected: Record<string, number> = {};
  for (const store of [workerStore, approverStore]) {
    for (const [kind, count] of Object.entries(store.injected)) faultsInjected[kind] = (faultsInjected[kind] ?? 0) + count;
  }
  return {
    mode: "faulted",
    killAtBoundary: undefined,
    killedAt: undefined,
    boundariesReached: 0,
    faultsInjected,
    faultsStopped,
    violations,
    degradedCalls: verdict?.degradedCalls ?? [],
    degradedTurns: verdict?.degradedTurns ?? [],
    durationMs: performance.now() - startedAt,
  };
}

