/**
 * The contract between `runBoundaryKillLoop` and a scenario: how one run
 * sets up a fresh store, starts the process under test, tells its end, and
 * checks what must hold after a kill.
 */
import type { DurableBoundaryTraceEntry } from "../internal/durable-boundary.ts";

/**
 * A process the loop starts, kills and stops: a Worker child such as
 * `startWorkerProcess` (this package) or `KillableWorkerProcess`
 * (`@perdure/agents/testing`) returns.
 */
export interface BoundaryKillProcess {
  readonly pid: number;
  /** Resolves with the exit code, or the signal name (`SIGKILL`), once the process exited. */
  readonly exited: Promise<number | string>;
  /** SIGKILLs the process (and its group) and waits for it to exit. */
  kill(): Promise<void>;
  /** SIGTERM: the process drains its Worker and exits. Resolves with the exit code or signal name. */
  stop(options?: { timeoutMs?: number }): Promise<number | string>;
  /** The end of its stdout and stderr, for failure messages. */
  output(): string;
}

/** What the loop tells a scenario about the run it sets up. */
export interface BoundaryKillRunInfo {
  /** The boundary (1-based) at which the run's first process is killed. */
  killAtBoundary: number;
  /** A fresh folder for this run's files (store, effect logs); the loop deletes it after `tearDown`. */
  directory: string;
}

/** How the loop asks a scenario to start a process. */
export interface BoundaryKillProcessStart {
  /**
   * Add these to the child's environment: the kill variable (first process
   * only), a trace file (both), the start signal of a replacement that
   * stands by (see {@link BoundaryKillScenario.standsBy}), and the loop's
   * compile cache (see the `compileCache` option). The loop reads the trace
   * back.
   */
  environment: Record<string, string>;
  /** false for the process that is to be killed, true for the one that replaces it. */
  isReplacement: boolean;
  /**
   * How long to wait for the child's ready line; pass it on as
   * `readyTimeoutMs`. A replacement that stands by is ready only after the
   * kill, so this covers the first process's whole run.
   */
  readyTimeoutMs: number;
}

/** What one run saw, given to {@link BoundaryKillScenario.checkInvariants}. */
export interface BoundaryKillRunResult {
  killAtBoundary: number;
  /** The boundary at which the first process killed itself; undefined when it reached the end first. */
  killedAt: DurableBoundaryTraceEntry | undefined;
  /** The boundaries the first process reached, in order, the fatal one included. */
  reachedByFirst: readonly DurableBoundaryTraceEntry[];
  /** The boundaries the replacement reached; empty without a kill. */
  reachedByReplacement: readonly DurableBoundaryTraceEntry[];
  /** Process ID of the first process, to tell its effects from the replacement's. */
  firstProcessId: number;
  /** Process ID of the replacement; undefined without a kill. */
  replacementProcessId: number | undefined;
}

/** One recorded Step method, as `Client.getStepHistory` returns it (only what the loop reads). */
export interface BoundaryKillHistoryEntry {
  stepType: string;
  status: string;
  finishedAt: Date;
}

/**
 * A scenario of `runBoundaryKillLoop`. Every run gets a fresh store from
 * `setUp`; the loop starts the first process armed to die at boundary n,
 * calls `begin`, waits for the process to die or for `isAtEnd`, starts a
 * replacement after a kill, waits for `isAtEnd` again, stops the process,
 * checks the loop's own invariant (no acknowledged commit lost, when
 * `readStepHistory` is given) and then `checkInvariants`.
 *
 * Whatever drives the scenario besides the Worker (approvals, RPCs) should
 * run inside the process under test, reconciling from the store, so its
 * boundaries count too and a replacement picks up where a killed one left.
 *
 * @example
 * const scenario: BoundaryKillScenario<OrderRun> = {
 *   name: "order",
 *   standsBy: true,
 *   setUp: async ({ directory }) => openOrderRun(directory),
 *   startProcess: (run, start) => startWorkerProcess({ entryModulePath, env: { ...start.environment, STORE: run.path }, readyTimeoutMs: start.readyTimeoutMs }),
 *   begin: (run) => run.client.start(orderFlow, "order-1", {}).then(() => undefined),
 *   isAtEnd: async (run) => (await run.client.describe("order-1")).status === "completed",
 *   readStepHistory: (run, flowId) => run.client.getStepHistory(flowId),
 *   checkInvariants: async (run, result) => assertOrderInvariants(run, result),
 *   tearDown: (run) => run.dispose(),
 * };
 */
export interface BoundaryKillScenario<TRun> {
  /** Names the scenario in reports and errors. */
  name: string;
  /**
   * True when the process entry calls `awaitBoundaryKillStartSignal()`
   * before it starts its Worker. The loop then starts each replacement ahead
   * of the kill, standing by with its modules loaded, and signals it once
   * the first process died, so a kill costs no process start-up.
   * @default false: the loop starts the replacement after the kill
   */
  standsBy?: boolean;
  /** Prepares one run on a fresh store, such as a SQLite file in `info.directory`. */
  setUp(info: BoundaryKillRunInfo): Promise<TRun>;
  /** Starts a process under test on the run's store, with `start.environment` added, and resolves once its Worker runs. */
  startProcess(run: TRun, start: BoundaryKillProcessStart): Promise<BoundaryKillProcess>;
  /** Called once the first process runs: start the Flows. @default nothing */
  begin?(run: TRun): Promise<void>;
  /** True once the scenario reached its end state and its Worker has nothing left to do. Polled; a throw counts as false. */
  isAtEnd(run: TRun): Promise<boolean>;
  /**
   * The Step history of a Flow. When given, the loop checks that every commit
   * the killed process saw land (`worker.commit.after-commit`) is recorded.
   * @default no check
   */
  readStepHistory?(run: TRun, flowId: string): Promise<readonly BoundaryKillHistoryEntry[]>;
  /**
   * The scenario's state in a few lines (Flow status, executions), added to
   * the report of a run that got stuck.
   * @default nothing
   */
  describeState?(run: TRun): Promise<string>;
  /** Throws (an `AssertionError`, say) when the run broke an invariant; the loop reports it with the boundary. */
  checkInvariants(run: TRun, result: BoundaryKillRunResult): Promise<void>;
  /** Removes what `setUp` made; called after every run, also a failed one. */
  tearDown(run: TRun): Promise<void>;
}
