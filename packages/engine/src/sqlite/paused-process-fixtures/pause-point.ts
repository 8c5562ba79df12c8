/**
 * Where the `paused` child process stops itself: `PERDURE_PAUSE_AT` names one
 * point, such as `commit:call-3` (before the third store call of a Worker's
 * commit) or `rpc:handler` (inside an RPC handler, at an await).
 */
import { writeSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";

/** `paused` stops itself at its pause point; `taker` must take over meanwhile. */
export type PauseRole = "paused" | "taker";

export function processRole(): PauseRole {
  const role = process.env["PERDURE_PAUSE_ROLE"];
  if (role !== "paused" && role !== "taker") throw new Error(`set PERDURE_PAUSE_ROLE to paused or taker, not ${String(role)}`);
  return role;
}

/** The point this process pauses at, or undefined. */
export function pausePoint(): string | undefined {
  return process.env["PERDURE_PAUSE_AT"];
}

let pausedOnce = false;

/** Whether this process reached its pause point already. */
export function hasPaused(): boolean {
  return pausedOnce;
}

/**
 * At this process's pause point (once): awaits a timer, so the event loop
 * turns as it does whenever a transaction waits on anything but the store,
 * then says where on stdout and SIGSTOPs the process. Returns after SIGCONT.
 */
export async function pauseHere(point: string): Promise<void> {
  if (pausedOnce || process.env["PERDURE_PAUSE_ROLE"] !== "paused" || pausePoint() !== point) return;
  pausedOnce = true;
  await delay(20);
  writeSync(1, `paused at ${point}\n`);
  process.kill(process.pid, "SIGSTOP");
}
