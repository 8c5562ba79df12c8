/**
 * The clock of a store: where every durable timestamp comes from (leases,
 * liveness, Timer due times, retry times, history and message times).
 *
 * Processes that share a store compare each other's timestamps, so they must
 * read one clock. A store on one machine (SQLite) uses the machine's clock; a
 * store that processes on many machines share (PostgreSQL) follows the
 * database server's clock, so that a process whose wall clock is off by
 * minutes neither loses healthy claims nor fires Timers early.
 */
export interface StoreClock {
  /** Milliseconds since the epoch, as every process sharing the store reads them. */
  now(): number;
}

/** The local wall clock (`Date.now()`), right for processes on one machine. */
export const systemClock: StoreClock = { now: () => Date.now() };
