import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/** A Stream resume token is corrupt, forged, or belongs to another Flow or Stream. */
export class InvalidResumeTokenError extends PerdureError {
  static readonly code = "invalid_resume_token";

  constructor(message: string, options?: { cause?: unknown }) {
    super(InvalidResumeTokenError.code, message, options);
  }

  static override isInstance(value: unknown): value is InvalidResumeTokenError {
    return hasErrorCode(value, InvalidResumeTokenError.code);
  }
}
