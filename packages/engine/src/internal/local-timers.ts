/**
 * The Worker's local timers: its sleeps, maintenance ticks, method-timeout
 * races and commit backoff. Durations only, never compared with stored
 * timestamps (those come from the store's clock). A simulation swaps in
 * virtual timers through `withWorkerTimers` of `@perdure/engine/internal`.
 */

/** Schedules local callbacks. */
export interface LocalTimers {
  /**
   * Calls `callback` once after `delayMs`; returns the function that cancels
   * it. A `background` timer does not keep the process alive.
   */
  after(delayMs: number, callback: () => void, options?: { background?: boolean }): () => void;
}

/** Node's timers. */
export const nodeTimers: LocalTimers = {
  after: (delayMs, callback, options) => {
    const timer = setTimeout(callback, delayMs);
    if (options?.background === true) timer.unref();
    return () => clearTimeout(timer);
  },
};

const timersByOptions = new WeakMap<object, LocalTimers>();

/**
 * Makes the Worker built from `workerOptions` use `timers` instead of Node's.
 * Internal: for Perdure's deterministic simulation.
 *
 * @example
 * const worker = new Worker(withWorkerTimers({ store, flows }, virtualTimers));
 */
export function withWorkerTimers<TOptions extends object>(workerOptions: TOptions, timers: LocalTimers): TOptions {
  timersByOptions.set(workerOptions, timers);
  return workerOptions;
}

/** The timers a Worker built from `workerOptions` uses. */
export function timersOf(workerOptions: object): LocalTimers {
  return timersByOptions.get(workerOptions) ?? nodeTimers;
}
