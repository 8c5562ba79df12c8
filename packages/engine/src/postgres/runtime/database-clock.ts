/**
 * The PostgreSQL store's clock: the database server's time, read now and
 * then and carried forward on this process's monotonic clock. A wall clock
 * that is off by minutes, or jumps, changes nothing: only the time elapsed
 * since the last reading comes from this process.
 */
import type { StoreClock } from "../../store/store-clock.ts";

/** The statement that reads the server's clock, in fractional epoch milliseconds. */
export const readDatabaseTimeSql = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms";

/**
 * A reading whose round trip took longer than this says little about when
 * the server read its clock (a busy event loop, a slow network), so it does
 * not replace a better one.
 */
const maxTrustedRoundTripMs = 1000;

/** How old the last reading may grow before the store takes another along with its next transaction. */
export const databaseClockResyncMs = 5000;

export class DatabaseClock implements StoreClock {
  /** Database time minus monotonic time at the last reading. */
  private offsetMs: number | undefined;
  private readAt = -Infinity;
  private readonly monotonicNow: () => number;

  constructor(monotonicNow: () => number = () => performance.now()) {
    this.monotonicNow = monotonicNow;
  }

  /** True when the store should read the server's clock again. */
  get isStale(): boolean {
    return this.monotonicNow() - this.readAt >= databaseClockResyncMs;
  }

  /** Marks the start of a reading (no other starts meanwhile); call `observe` with its result. */
  startReading(): number {
    const sentAt = this.monotonicNow();
    this.readAt = sentAt;
    return sentAt;
  }

  /**
   * Takes a reading of the server's clock sent at `sentAt` (from
   * `startReading`): the server read it about halfway through the round trip.
   */
  observe(databaseNowMs: number, sentAt: number): void {
    const receivedAt = this.monotonicNow();
    const roundTripMs = receivedAt - sentAt;
    if (!Number.isFinite(databaseNowMs)) throw new Error(`the database returned no usable time: ${String(databaseNowMs)}`);
    this.readAt = receivedAt;
    // The monotonic clock carries the last good reading forward meanwhile.
    if (roundTripMs > maxTrustedRoundTripMs && this.offsetMs !== undefined) return;
    this.offsetMs = databaseNowMs - (sentAt + roundTripMs / 2);
  }

  now(): number {
    if (this.offsetMs === undefined) throw new Error("the PostgreSQL store read no database time yet: open it with PostgresStore.open");
    return Math.round(this.monotonicNow() + this.offsetMs);
  }
}
