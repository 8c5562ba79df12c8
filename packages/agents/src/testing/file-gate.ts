import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { InvalidInputError } from "@perdure/engine";

/** Options of {@link FileGate.waitUntilOpen}. */
export interface FileGateWaitUntilOpenOptions {
  /** Stops waiting; the wait rejects with the signal's reason. @default none: waits until opened */
  signal?: AbortSignal;
  /** @default 10 */
  pollIntervalMs?: number;
}

/** Options of {@link FileGate.waitUntilReached}. */
export interface FileGateWaitUntilReachedOptions {
  /** How many arrivals to wait for, counting every process since the gate was made. @default 1 */
  count?: number;
  /** Fails the wait with an error naming the gate after this long. @default 60_000 */
  timeoutMs?: number;
  /** Stops waiting; the wait rejects with the signal's reason. @default none */
  signal?: AbortSignal;
  /** @default 10 */
  pollIntervalMs?: number;
}

/** One arrival of Worker code at a {@link FileGate}. */
export interface FileGateArrival {
  processId: number;
  /** Milliseconds since the epoch. */
  reachedAt: number;
}

/** Sleeps, or rejects with the signal's own reason (not an `AbortError` wrapping it) once aborted. */
async function sleep(milliseconds: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await delay(milliseconds, undefined, signal === undefined ? {} : { signal });
  } catch (error) {
    signal?.throwIfAborted();
    throw error;
  }
}

const gateNamePattern = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/**
 * Pauses Worker code at an exact point, across processes, through files in a
 * folder: the Worker code calls `waitUntilOpen()`, which writes a
 * `<name>.reached` marker and waits for `<name>.open`; the test waits with
 * `waitUntilReached()`, then kills the Worker or calls `open()`. Make the gate
 * with the same folder and name on both sides.
 *
 * @example
 * // In a Step of the fixture Flow (Worker process):
 * await new FileGate(input.gateDirectory, "before-charge").waitUntilOpen({ signal: context.cancellationSignal });
 * // In the test:
 * const gate = new FileGate(engine.directory, "before-charge");
 * await gate.waitUntilReached();
 * await worker.kill();
 * gate.open();
 */
export class FileGate {
  readonly directory: string;
  readonly name: string;
  /** The file whose existence opens the gate. */
  readonly openPath: string;
  /** The append-only marker, one JSON line per arrival. */
  readonly reachedPath: string;

  constructor(directory: string, name: string) {
    if (typeof name !== "string" || !gateNamePattern.test(name)) {
      throw new InvalidInputError(`FileGate name ${JSON.stringify(name)} is invalid: use letters, digits, ".", "_" and "-", as it names files`);
    }
    this.directory = directory;
    this.name = name;
    this.openPath = join(directory, `${name}.open`);
    this.reachedPath = join(directory, `${name}.reached`);
  }

  /** Opens the gate: current and future waiters pass. */
  open(): void {
    mkdirSync(this.directory, { recursive: true });
    writeFileSync(this.openPath, "");
  }

  isOpen(): boolean {
    return existsSync(this.openPath);
  }

  /** Every arrival so far, oldest first. */
  arrivals(): FileGateArrival[] {
    if (!existsSync(this.reachedPath)) return [];
    const lines = readFileSync(this.reachedPath, "utf8").split("\n");
    // A line without its newline was cut by a kill mid-write: it never counted.
    return lines.slice(0, -1).filter((line) => line !== "").map((line) => JSON.parse(line) as FileGateArrival);
  }

  /**
   * Worker side: records the arrival, then resolves once the gate is open
   * (at once when it already is).
   */
  async waitUntilOpen(options: FileGateWaitUntilOpenOptions = {}): Promise<void> {
    options.signal?.throwIfAborted();
    mkdirSync(this.directory, { recursive: true });
    const arrival: FileGateArrival = { processId: process.pid, reachedAt: Date.now() };
    // One O_APPEND write per arrival, so arrivals from several processes never interleave.
    appendFileSync(this.reachedPath, `${JSON.stringify(arrival)}\n`);
    const pollIntervalMs = options.pollIntervalMs ?? 10;
    while (!this.isOpen()) {
      await sleep(pollIntervalMs, options.signal);
    }
  }

  /** Test side: resolves once Worker code reached the gate `count` times in total. */
  async waitUntilReached(options: FileGateWaitUntilReachedOptions = {}): Promise<void> {
    const count = options.count ?? 1;
    const timeoutMs = options.timeoutMs ?? 60_000;
    const pollIntervalMs = options.pollIntervalMs ?? 10;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      options.signal?.throwIfAborted();
      const reached = this.arrivals().length;
      if (reached >= count) return;
      if (Date.now() >= deadline) {
        throw new Error(`FileGate ${this.name} in ${this.directory} was reached ${reached} of ${count} times within ${timeoutMs} ms`);
      }
      await sleep(pollIntervalMs, options.signal);
    }
  }
}
