import { PerdureError } from "@perdure/engine";

/**
 * A session already holds as many waiting user messages (queued and steered,
 * not yet taken by a turn) as `maxQueuedUserMessages` or
 * `maxQueuedUserMessageBytes` allow; the message was not stored. Wait for the
 * running turn, or delete or steer a queued message, and send again.
 */
export class QueuedUserMessagesFullError extends PerdureError {
  static readonly code = "queued_user_messages_full";

  constructor(message: string, options?: { cause?: unknown }) {
    super(QueuedUserMessagesFullError.code, message, options);
  }

  /** True for this error, even one thrown by another copy of the package. */
  static override isInstance(value: unknown): value is QueuedUserMessagesFullError {
    return PerdureError.isInstance(value) && value.code === QueuedUserMessagesFullError.code;
  }
}
