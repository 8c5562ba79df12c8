/**
 * The start signal of a replacement process that stands by: the loop starts
 * it before the kill (so it has loaded its modules when it is needed), and
 * tells it through a small file whether to start its Worker or to leave.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";

/**
 * The environment variable that names the start signal file of a
 * replacement that stands by: `PERDURE_BOUNDARY_KILL_START_SIGNAL=<path>`.
 */
export const boundaryKillStartSignalEnvironmentVariable = "PERDURE_BOUNDARY_KILL_START_SIGNAL";

/** What the signal file says: run the Worker, or exit without starting it. */
export type BoundaryKillStartSignal = "start" | "exit";

/** How often a standing-by process looks at its signal file. */
const signalPollMs = 5;

/**
 * The child side of a scenario that stands by (`standsBy: true`): when the
 * process was started with {@link boundaryKillStartSignalEnvironmentVariable},
 * waits until the loop says `start` (the process it replaces was killed), or
 * exits 0 when it says `exit` or the parent died. Returns at once otherwise.
 * Call it after the module imports and before the Worker starts.
 *
 * @example
 * // worker-main.ts
 * import { awaitBoundaryKillStartSignal, runWorkerProcess } from "@perdure/engine/testing";
 * await awaitBoundaryKillStartSignal();
 * await runWorkerProcess({ flows: [orderFlow], storePath: process.env.STORE_PATH! });
 */
export async function awaitBoundaryKillStartSignal(): Promise<void> {
  const path = process.env[boundaryKillStartSignalEnvironmentVariable];
  if (path === undefined || path === "") return;
  const parent = process.ppid;
  for (;;) {
    const signal = existsSync(path) ? readFileSync(path, "utf8") : "";
    if (signal === "start") return;
    if (signal === "exit" || process.ppid !== parent) process.exit(0);
    await delay(signalPollMs);
  }
}

/** The parent side: writes the signal atomically, so the child never reads half of it. */
export function sendBoundaryKillStartSignal(path: string, signal: BoundaryKillStartSignal): void {
  writeFileSync(`${path}.next`, signal);
  renameSync(`${path}.next`, path);
}
