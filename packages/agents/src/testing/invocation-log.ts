import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";

/** One line of an {@link InvocationLog}. */
export interface InvocationLogEntry {
  name: string;
  processId: number;
  /** Milliseconds since the epoch. */
  recordedAt: number;
  /** What `record` was given, after a JSON round trip; absent when none was given. */
  details?: unknown;
}

/**
 * Counts real runs of tools (or any side effect) across processes in an
 * append-only file, one JSON line per `record`. Each line is written
 * synchronously in one append, so a SIGKILL right after `record` loses
 * nothing; the store cannot tell how often a tool really ran, this can.
 *
 * @example
 * // In the tool (Worker process):
 * new InvocationLog(input.invocationLogPath).record("charge_card", { amount: 12 });
 * // In the test:
 * assert.equal(new InvocationLog(invocationLogPath).count("charge_card"), 1);
 */
export class InvocationLog {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  /** Appends one entry; `details` must survive `JSON.stringify`. */
  record(name: string, details?: unknown): void {
    const entry: InvocationLogEntry = { name, processId: process.pid, recordedAt: Date.now(), ...(details === undefined ? {} : { details }) };
    mkdirSync(dirname(this.path), { recursive: true });
    appendFileSync(this.path, `${JSON.stringify(entry)}\n`);
  }

  /** Every entry, oldest first; empty when nothing was recorded. */
  entries(): InvocationLogEntry[] {
    if (!existsSync(this.path)) return [];
    const lines = readFileSync(this.path, "utf8").split("\n");
    // A line without its newline was cut by a kill mid-write: it was never recorded.
    return lines.slice(0, -1).filter((line) => line !== "").map((line) => JSON.parse(line) as InvocationLogEntry);
  }

  /** How many entries have this name. */
  count(name: string): number {
    return this.entries().filter((entry) => entry.name === name).length;
  }
}
