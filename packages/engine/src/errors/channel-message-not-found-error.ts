import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/** The Channel message is no longer queued: it was consumed or deleted. */
export class ChannelMessageNotFoundError extends PerdureError {
  static readonly code = "channel_message_not_found";

  constructor(message: string, options?: { cause?: unknown }) {
    super(ChannelMessageNotFoundError.code, message, options);
  }

  static override isInstance(value: unknown): value is ChannelMessageNotFoundError {
    return hasErrorCode(value, ChannelMessageNotFoundError.code);
  }
}
