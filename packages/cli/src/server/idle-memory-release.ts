/**
 * Gives memory back to the system once `perdure dev` goes quiet. A burst of
 * streaming chat clients grows V8's heap (its young generation and the old
 * generation's pages) well past what stays alive; V8 keeps those pages, so
 * the process's resident memory stayed at its peak long after the clients
 * left (measured in bench/RESULTS.md). Once no request has been in flight
 * for `idleMs`, this runs one full garbage collection of the "last resort"
 * kind (V8's `CollectAllAvailableGarbage`), which also releases the free
 * pages, and then waits for the next request before it may run again.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** How long without a request in flight counts as idle. */
export const idleMemoryReleaseMs = 10_000;

type GarbageCollection = (options: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;

/** V8's `gc()`, exposed once; a new context picks the flag up. */
function garbageCollection(): GarbageCollection {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as GarbageCollection;
}

/** V8's last-resort full collection, which also shrinks the young generation and frees the pages V8 pooled. */
function lastResortCollection(): () => void {
  const collect = garbageCollection();
  return () => collect({ type: "major", execution: "sync", flavor: "last-resort" });
}

/** A running release: `stop()` removes its listener and timer. */
export interface IdleMemoryRelease {
  /** How many times memory was released. */
  readonly releases: number;
  stop(): void;
}

/** Watches `server`'s requests; after `idleMs` with none in flight, collects garbage once. */
export function startIdleMemoryRelease(server: Pick<Server, "on" | "off">, idleMs = idleMemoryReleaseMs): IdleMemoryRelease {
  const collect = lastResortCollection();
  let inFlight = 0;
  let releases = 0;
  let timer: NodeJS.Timeout | undefined;
  // Nothing happened since the last release: no reason to collect again.
  let isDirty = false;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (inFlight > 0 || !isDirty) return;
      isDirty = false;
      collect();
      releases += 1;
    }, idleMs);
    timer.unref();
  };
  const onRequest = (_request: IncomingMessage, response: ServerResponse): void => {
    inFlight += 1;
    isDirty = true;
    clearTimeout(timer);
    // `close` comes once the answer is sent or the connection went away, streams included.
    response.once("close", () => {
      inFlight -= 1;
      if (inFlight === 0) arm();
    });
  };
  server.on("request", onRequest);
  return {
    get releases() {
      return releases;
    },
    stop: () => {
      clearTimeout(timer);
      server.off("request", onRequest);
    },
  };
}

/** How often a Worker's running attempts are sampled. */
export const workerActivitySampleMs = 500;

/** What a Worker's release reads: its attempts running now. */
export interface WorkerActivity {
  readonly activeCount: number;
}

/** Options of `startWorkerIdleMemoryRelease`; the defaults are what `perdure worker` uses. */
export interface WorkerIdleMemoryReleaseOptions {
  /** How long with no attempt running counts as idle. @default idleMemoryReleaseMs (10 s) */
  idleMs?: number;
  /** How often the running attempts are sampled. @default workerActivitySampleMs (500 ms) */
  sampleMs?: number;
  /** The collection to run; V8's last-resort full collection unless replaced (tests). */
  collect?: () => void;
}

/**
 * Gives memory back once a Worker goes quiet: the Worker's counterpart of
 * `startIdleMemoryRelease`. A burst of Steps grows V8's young generation and
 * leaves old-generation pages V8 keeps for reuse; an ordinary collection
 * keeps both, so a Worker process stayed at the resident size of its largest
 * burst and crept up a few MiB with each later one (bench/RESULTS.md, "Worker
 * memory after work"). Every `sampleMs` this reads how many attempts run;
 * once none has run for `idleMs` after a sample that saw one, it runs one
 * last-resort collection, then waits for the next busy sample. An attempt
 * shorter than `sampleMs` that no sample sees does not count: it allocates
 * too little to matter, and the next sampled one releases its memory too.
 */
export function startWorkerIdleMemoryRelease(worker: WorkerActivity, options: WorkerIdleMemoryReleaseOptions = {}): IdleMemoryRelease {
  const idleMs = options.idleMs ?? idleMemoryReleaseMs;
  const collect = options.collect ?? lastResortCollection();
  let releases = 0;
  let isDirty = false;
  let idleSince: number | undefined;
  const sample = setInterval(() => {
    if (worker.activeCount > 0) {
      isDirty = true;
      idleSince = undefined;
      return;
    }
    if (!isDirty) return;
    const now = performance.now();
    idleSince ??= now;
    if (now - idleSince < idleMs) return;
    isDirty = false;
    idleSince = undefined;
    collect();
    releases += 1;
  }, options.sampleMs ?? workerActivitySampleMs);
  sample.unref();
  return {
    get releases() {
      return releases;
    },
    stop: () => clearInterval(sample),
  };
}
