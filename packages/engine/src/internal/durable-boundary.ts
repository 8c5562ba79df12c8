/**
 * Durable boundaries: the points where a process may die and what it made
 * durable so far must hold (before and after each claim and commit of a
 * Worker, inside an RPC's commit, and the session points of
 * `@perdure/agents`). The boundary-kill loop of `@perdure/engine/testing`
 * starts a process with {@link killAtBoundaryEnvironmentVariable} set, and
 * the process SIGKILLs itself when it reaches that boundary.
 *
 * With neither environment variable set, {@link durableBoundary} is one
 * branch on a constant: the variables are read once, when the module loads.
 */
import { InvalidInputError } from "../errors/invalid-input-error.ts";

/**
 * The environment variable that arms the kill: `PERDURE_KILL_AT_BOUNDARY=<n>`
 * SIGKILLs the process when it reaches its n-th durable boundary (counting
 * from 1, in the order this process reached them).
 */
export const killAtBoundaryEnvironmentVariable = "PERDURE_KILL_AT_BOUNDARY";

/**
 * The environment variable that names a trace file:
 * `PERDURE_BOUNDARY_TRACE=<path>` appends one JSON line (a
 * `DurableBoundaryTraceEntry`) per boundary the process reaches, written
 * synchronously, so the line of the boundary that killed the process is in
 * the file.
 */
export const boundaryTraceEnvironmentVariable = "PERDURE_BOUNDARY_TRACE";

/**
 * A boundary name: `<area>.<point>`, such as `worker.commit.after-commit`.
 * The engine marks `worker.claim.before-commit`, `worker.claim.after-commit`,
 * `worker.commit.before-commit`, `worker.commit.after-commit` and
 * `rpc.before-commit`; other packages add their own areas.
 */
export type DurableBoundaryName = `${string}.${string}`;

/** One line of a boundary trace file. */
export interface DurableBoundaryTraceEntry {
  /** 1 for the first boundary the process reached. */
  boundary: number;
  name: DurableBoundaryName;
  flowId: string;
  /** What passed it: a Step type, an RPC name, a tool name. */
  detail: string | null;
  processId: number;
  /** When the process reached it, in milliseconds since the epoch. */
  at: number;
  /** `kill` on the boundary at which the process SIGKILLed itself. */
  action?: "kill";
}

interface ArmedBoundaries {
  reached: number;
  killAt: number | undefined;
  tracePath: string | undefined;
}

function parseKillAt(text: string | undefined): number | undefined {
  if (text === undefined || text === "") return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidInputError(`${killAtBoundaryEnvironmentVariable}=${JSON.stringify(text)} is invalid: use a positive integer (1 kills at the first durable boundary), or unset it`);
  }
  return value;
}

function armFromEnvironment(): ArmedBoundaries | undefined {
  const environment = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const killAt = parseKillAt(environment?.[killAtBoundaryEnvironmentVariable]);
  const tracePath = environment?.[boundaryTraceEnvironmentVariable];
  if (killAt === undefined && (tracePath === undefined || tracePath === "")) return undefined;
  return { reached: 0, killAt, tracePath: tracePath === "" ? undefined : tracePath };
}

// Shared through the global object, so that two copies of the engine in one process (the agents
// package may bring its own) count one sequence of boundaries, as the kill variable means.
const sharedKey = Symbol.for("perdure.durableBoundaries");
const holder = globalThis as unknown as Record<symbol, ArmedBoundaries | null | undefined>;
if (holder[sharedKey] === undefined) holder[sharedKey] = armFromEnvironment() ?? null;
const armed: ArmedBoundaries | undefined = holder[sharedKey] ?? undefined;

function reach(state: ArmedBoundaries, name: DurableBoundaryName, flowId: string, detail: string | undefined): void {
  state.reached += 1;
  const isKill = state.reached === state.killAt;
  const fs = process.getBuiltinModule("node:fs");
  if (state.tracePath !== undefined) {
    const entry: DurableBoundaryTraceEntry = {
      boundary: state.reached,
      name,
      flowId,
      detail: detail ?? null,
      processId: process.pid,
      at: Date.now(),
      ...(isKill ? { action: "kill" as const } : {}),
    };
    fs.appendFileSync(state.tracePath, `${JSON.stringify(entry)}\n`);
  }
  if (!isKill) return;
  fs.writeSync(2, `perdure: SIGKILL at durable boundary ${state.reached} (${name} of ${flowId}${detail === undefined ? "" : ` ${detail}`})\n`);
  process.kill(process.pid, "SIGKILL");
  // The signal may land a moment after kill() returns: run nothing more until it does.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
  throw new Error(`SIGKILL at durable boundary ${state.reached} did not stop process ${process.pid}`);
}

/**
 * Marks a durable boundary: a point where the process may die, and where
 * everything committed before it must survive and nothing after it may be
 * assumed. Perdure's own packages call it; applications need not. Without
 * {@link killAtBoundaryEnvironmentVariable} and
 * {@link boundaryTraceEnvironmentVariable} it returns at once, so the
 * arguments are plain references the caller already holds (no strings built
 * per call).
 *
 * @param name where the process is, as `<area>.<point>`
 * @param flowId the Flow whose durable state the boundary is about
 * @param detail what passed it: a Step type, an RPC name, a tool name
 *
 * @example
 * const result = await runner.executeDeferredToolCall(execution);
 * durableBoundary("agent.tool.before-record", context.flowId, record.toolName);
 */
export function durableBoundary(name: DurableBoundaryName, flowId: string, detail?: string): void {
  if (armed === undefined) return;
  reach(armed, name, flowId, detail);
}
