import { lastCommitSendMark, onLocalCommit, type WrittenNames, type WrittenValue } from "../flow/local-commits.ts";
import { runsLocally } from "../flow/local-attempts.ts";
import type { Store } from "../store/store.ts";

/**
 * What a local commit's written values say about the result a read would
 * return: `"unchanged"` when the commit wrote nothing the read reads, the
 * result itself when it wrote everything the read reads, undefined when it
 * cannot tell (read again).
 */
export type WrittenVerdict<TResult> = "unchanged" | { result: TResult } | undefined;

/**
 * Resolves after `ms`, when `signal` aborts, or when the wake-up handed to
 * `hold` is called, whichever comes first; `hold` gets undefined back then.
 */
export function pauseUntilWoken(ms: number, signal: AbortSignal | undefined, hold: (wakeUp: (() => void) | undefined) => void): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      hold(undefined);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    hold(done);
  });
}

/**
 * Reads with `read` until `until` accepts the result, the time is up or the
 * signal aborts; returns the last result. Between reads it waits for a
 * commit in this process that wrote `flowId`'s Attributes (one of `names`,
 * when given: a commit that wrote only others changes nothing read), the Flow's end,
 * or the store's poll interval, whichever comes first; and, as long as no
 * such local commit came and no Worker of this process runs one of the
 * Flow's Steps (the Flow runs in another process), for the Flow's Stream
 * wake-ups, which other processes send. A change announced while a read
 * runs makes it read again at once.
 *
 * With `fromWrites`, a local commit whose written values settle the result
 * is judged by them. When `until` accepts them and the commit's request was
 * sent after the last read returned (its send mark, see `markCommitSend`),
 * they are the result: that commit landed after everything the read saw, so
 * its values held at a moment of the wait. Otherwise an accepted result is
 * read again (the read returns what is committed then, that commit's state
 * or a later one). A commit whose result `until` refuses, or that wrote
 * nothing read, reads nothing: a later commit of this process is told in its
 * turn, and one of another process is seen at the poll interval, as after
 * any local commit.
 */
export async function waitForChange<TResult>(
  store: Store,
  flowId: string,
  options: {
    timeoutMs: number;
    signal: AbortSignal | undefined;
    names?: ReadonlySet<string>;
    fromWrites?: (values: readonly WrittenValue[]) => WrittenVerdict<TResult>;
  },
  read: () => Promise<TResult>,
  until: (result: TResult) => boolean,
): Promise<TResult> {
  // A local wait: the monotonic clock, which no wall-clock jump moves.
  const deadline = performance.now() + options.timeoutMs;
  let changes = 0;
  let committedHere = false;
  let wakeUp: (() => void) | undefined;
  /** Results that local commits wrote since the last read began, with their send marks, for `until` to judge before reading. */
  const written: { result: TResult; sent: number | undefined }[] = [];
  /** The send mark when the last read returned: a commit marked after it landed after what that read saw. */
  let readMark: number;
  const aborted = (): boolean => options.signal?.aborted === true;
  const changed = (): void => {
    changes += 1;
    wakeUp?.();
  };
  const stopCommits = onLocalCommit(store, flowId, (names: WrittenNames, values: readonly WrittenValue[] | undefined, sent: number | undefined) => {
    committedHere = true;
    const wanted = options.names;
    if (wanted !== undefined && names !== undefined && ![...names].some((name) => wanted.has(name))) return;
    let verdict: WrittenVerdict<TResult>;
    try {
      verdict = values === undefined || options.fromWrites === undefined ? undefined : options.fromWrites(values);
    } catch {
      // A value the codec refuses: the read says so, as it would without the values.
      verdict = undefined;
    }
    if (verdict === "unchanged") return;
    if (verdict === undefined) {
      changed();
      return;
    }
    // Judged by the waiting loop, not here in the committing Worker's path.
    written.push({ result: verdict.result, sent });
    wakeUp?.();
  });
  const unsubscribe = store.subscribe((event) => {
    if (event.kind === "flow_finished" && event.flowId === flowId) changed();
    // Once a Worker of this process is seen committing the Flow, or runs one of its Steps, its commits say more than its Stream writes.
    if (event.kind === "stream" && event.flowId === flowId && !committedHere && !runsLocally(store, flowId)) changed();
  });
  try {
    for (;;) {
      const changesBefore = changes;
      // A read that starts after a commit sees that commit or a later one.
      written.length = 0;
      const result = await read();
      readMark = lastCommitSendMark();
      if (until(result) || deadline - performance.now() <= 0 || aborted()) return result;
      const pollAt = performance.now() + store.pollIntervalMs;
      // Wait for a reason to read again: a change, a written result `until` accepts, the poll interval, the deadline or the signal.
      for (;;) {
        if (changes !== changesBefore) break;
        let accepted = false;
        for (const candidate of written.splice(0)) {
          if (!until(candidate.result)) continue;
          if (candidate.sent !== undefined && candidate.sent > readMark) return candidate.result;
          accepted = true;
        }
        if (accepted) break;
        const left = Math.min(deadline, pollAt) - performance.now();
        if (left <= 0 || aborted()) break;
        await pauseUntilWoken(left, options.signal, (wake) => (wakeUp = wake));
      }
    }
  } finally {
    unsubscribe();
    stopCommits();
  }
}
