import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/** A Flow, Step, RPC or persistence definition is malformed; the message names the bad part. */
export class InvalidDefinitionError extends PerdureError {
  static readonly code = "invalid_definition";

  constructor(message: string, options?: { cause?: unknown }) {
    super(InvalidDefinitionError.code, message, options);
  }

  static override isInstance(value: unknown): value is InvalidDefinitionError {
    return hasErrorCode(value, InvalidDefinitionError.code);
  }
}
