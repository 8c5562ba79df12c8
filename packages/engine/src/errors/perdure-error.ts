const perdureErrorMarker = Symbol.for("perdure.engine.error");

/**
 * Base class of every error the engine throws on purpose.
 *
 * `code` is stable and machine-readable; the message names the offending value
 * and says what to do. Use {@link PerdureError.isInstance} rather than
 * `instanceof` when errors may cross copies of the package.
 */
export class PerdureError extends Error {
  readonly code: string;
  readonly [perdureErrorMarker] = true;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }

  /** True for any engine error, even one thrown by another copy of the package. */
  static isInstance(value: unknown): value is PerdureError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[perdureErrorMarker] === true;
  }
}

/** Builds the cross-copy guard of one error class from its `code`. */
export function hasErrorCode(value: unknown, code: string): boolean {
  return PerdureError.isInstance(value) && value.code === code;
}
