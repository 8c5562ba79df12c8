import { onLocalCommit, type WrittenNames } from "../flow/local-commits.ts";
import type { Store } from "../store/store.ts";

/**
 * Reads with `read` until `until` accepts the result, the time is up or the
 * signal aborts; returns the last result. Between reads it waits for a
 * commit in this process that wrote `flowId`'s Attributes (one of `names`,
 * when given: a commit that wrote only others changes nothing read), the Flow's end,
 * or the store's poll interval, whichever comes first; and, as long as no
 * such local commit came (the Flow runs in another process), for the
 * Flow's Stream wake-ups, which other processes send. A change announced
 * while a read runs makes it read again at once.
 */
export async function waitForChange<TResult>(
  store: Store,
  flowId: string,
  options: { timeoutMs: number; signal: AbortSignal | undefined; names?: ReadonlySet<string> },
  read: () => Promise<TResult>,
  until: (result: TResult) => boolean,
): Promise<TResult> {
  // A local wait: the monotonic clock, which no wall-clock jump moves.
  const deadline = performance.now() + options.timeoutMs;
  let changes = 0;
  let committedHere = false;
  let wakeUp: (() => void) | undefined;
  const changed = (): void => {
    changes += 1;
    wakeUp?.();
  };
  const stopCommits = onLocalCommit(store, flowId, (written: WrittenNames) => {
    committedHere = true;
    const { names } = options;
    if (names !== undefined && written !== undefined && ![...written].some((name) => names.has(name))) return;
    changed();
  });
  const unsubscribe = store.subscribe((event) => {
    if (event.kind === "flow_finished" && event.flowId === flowId) changed();
    // Once a Worker of this process is seen committing the Flow, its commits say more than its Stream writes.
    if (event.kind === "stream" && event.flowId === flowId && !committedHere) changed();
  });
  try {
    for (;;) {
      const changesBefore = changes;
      const result = await read();
      const left = deadline - performance.now();
      if (until(result) || left <= 0 || options.signal?.aborted === true) return result;
      if (changes !== changesBefore) continue;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          options.signal?.removeEventListener("abort", done);
          wakeUp = undefined;
          resolve();
        };
        const timer = setTimeout(done, Math.min(left, store.pollIntervalMs));
        options.signal?.addEventListener("abort", done, { once: true });
        wakeUp = done;
      });
    }
  } finally {
    unsubscribe();
    stopCommits();
  }
}
