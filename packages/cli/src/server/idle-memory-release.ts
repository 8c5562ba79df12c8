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

/** A running release: `stop()` removes its listener and timer. */
export interface IdleMemoryRelease {
  /** How many times memory was released. */
  readonly releases: number;
  stop(): void;
}

/** Watches `server`'s requests; after `idleMs` with none in flight, collects garbage once. */
export function startIdleMemoryRelease(server: Pick<Server, "on" | "off">, idleMs = idleMemoryReleaseMs): IdleMemoryRelease {
  const collect = garbageCollection();
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
      collect({ type: "major", execution: "sync", flavor: "last-resort" });
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
