/**
 * The logger the engine, its Workers and the servers above it write to:
 * pino's calling convention (`logger.error({ err, flowId }, "message")`), so
 * a pino logger fits as it is and any other logger fits with a few lines.
 */

/** Fields of one log entry; `err` holds a thrown value, which the logger serializes with its stack. */
export type LogFields = Record<string, unknown>;

/**
 * A structured logger. pino's `Logger` is one; so is any object with these
 * four methods.
 *
 * @example
 * import pino from "pino";
 * const worker = new Worker({ store, flows, logger: pino() });
 */
export interface PerdureLogger {
  debug(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
}

/** The fields of a failed Step attempt, as every logger of the engine writes them. */
export interface FailedAttemptLogFields extends LogFields {
  flowId: string;
  flowType: string;
  stepType: string;
  executionId: string;
  method: "wait_until" | "execute";
  attempt: number;
  err: unknown;
}
