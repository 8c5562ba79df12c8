/**
 * How a Worker process reports a store it cannot reach: once, when the
 * outage starts, and once when the store answers again, instead of one line
 * per failed retry (several a second while a database is down).
 */
import type { PerdureLogger } from "@perdure/engine";

const connectionErrorCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EPIPE", "EAI_AGAIN", "57P01", "57P02", "57P03"]);
const connectionErrorMessages = /connection terminated|timeout exceeded when trying to connect|connection error|not queryable|server closed the connection|the database system is (starting up|shutting down)/i;

/** True when `error` (or one of its causes) says the store could not be reached. */
export function isStoreConnectionError(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (code !== undefined && connectionErrorCodes.has(code)) return true;
    if (connectionErrorMessages.test(current.message)) return true;
  }
  return false;
}

/** How long without a connection error, while claiming, before the store counts as back. */
const quietSpellMs = 5000;

/** Reports store outages once each; other errors as they come. */
export class StoreOutageLog {
  private unreachableSince: number | undefined;
  private lastFailureAt = 0;
  private readonly logger: PerdureLogger;

  constructor(logger: PerdureLogger) {
    this.logger = logger;
  }

  /** A Worker's `onError`. */
  readonly onError = (error: unknown): void => {
    if (!isStoreConnectionError(error)) {
      this.logger.error({ err: error }, "Worker error");
      return;
    }
    this.lastFailureAt = Date.now();
    const reason = error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : String(error);
    this.reportUnreachable(reason);
  };

  /**
   * Called every second with `Worker.isClaiming`: a Worker whose liveness
   * writes stopped reaching the store is cut off even when no call has
   * failed yet (a connection attempt may hang until its timeout).
   */
  noteClaiming(isClaiming: boolean): void {
    if (!isClaiming) {
      this.reportUnreachable("its liveness writes stopped reaching it");
      return;
    }
    // Claiming may still rest on a liveness write from before the outage: wait for a quiet spell.
    if (this.unreachableSince === undefined || Date.now() - this.lastFailureAt < quietSpellMs) return;
    const outageMs = Date.now() - this.unreachableSince;
    this.logger.info({ outageMs }, `the store answers again after ${(outageMs / 1000).toFixed(1)} s`);
    this.unreachableSince = undefined;
  }

  private reportUnreachable(reason: string): void {
    if (this.unreachableSince !== undefined) return;
    this.unreachableSince = Date.now();
    this.logger.error({ reason }, `the store is unreachable (${reason}); retrying until it answers, and /readyz answers 503 meanwhile`);
  }
}
