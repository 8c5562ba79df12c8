// Messages sent while a turn runs wait in the session's queue (durably, in
// the session's channel); each starts the next turn, oldest first. This strip
// shows them above the composer: the session's queue from its snapshot, plus
// the ones this tab is still sending. Each queued message can be sent into
// the running turn now ("Send now": `steer_user_message`), which ends the turn
// at its next safe point and starts one with the message, or deleted
// (`delete_queued_message`). Steered messages the turn has not taken yet show
// below them.
import type { WireQueuedMessage } from "../../lib/api.ts";
import { formatRelative } from "../../lib/format.ts";
import { ClockIcon } from "../Icons.tsx";
import type { LocalQueuedMessage, QueuedMessageAction } from "./use-message-queue.ts";

export interface QueuedMessagesProps {
  queued: WireQueuedMessage[];
  steered: WireQueuedMessage[];
  local: LocalQueuedMessage[];
  /** What this tab is doing to each queued message, or why it failed, by message ID. */
  actions: ReadonlyMap<string, QueuedMessageAction>;
  /** "Send now" is offered: a turn runs and accepts steering. */
  canSteer: boolean;
  onSteer: (messageId: string) => void;
  onDelete: (messageId: string) => void;
  onDismiss: (localId: string) => void;
}

export function QueuedMessages(props: QueuedMessagesProps) {
  const local = props.local.filter((message) => message.state !== "queued" || !props.queued.some((queued) => queued.text === message.text));
  const count = props.queued.length + local.filter((message) => message.state !== "failed").length;
  if (count === 0 && local.length === 0 && props.steered.length === 0) return null;
  return (
    <div className="queued" data-testid="queued-messages">
      {count > 0 && (
        <div className="queued-head">
          <span className="queued-icon"><ClockIcon /></span>
          {count === 1 ? "1 message queued" : `${count} messages queued`}
          <span className="muted"> · each starts the next turn when this one ends</span>
        </div>
      )}
      <ul className="queued-list">
        {props.queued.map((message) => {
          const action = props.actions.get(message.message_id);
          const working = action?.state === "steering" || action?.state === "deleting";
          return (
            <li key={message.message_id} className="queued-item" data-testid="queued-message" data-message-id={message.message_id}>
              <span className="queued-text">{message.text}</span>
              <span className="muted small">{formatRelative(message.sent_at)}</span>
              {action?.state === "steering" && <span className="muted small">sending into the turn…</span>}
              {action?.state === "deleting" && <span className="muted small">deleting…</span>}
              {action?.state === "failed" && <span className="error-text small" role="alert">{action.error}</span>}
              {props.canSteer && (
                <button
                  type="button"
                  className="button button-ghost small"
                  disabled={working}
                  title="Send this message into the running turn now: the turn ends at its next safe point and a new one starts with it"
                  onClick={() => props.onSteer(message.message_id)}
                >
                  Send now
                </button>
              )}
              <button type="button" className="button button-ghost small" disabled={working} title="Delete this message before it starts a turn" onClick={() => props.onDelete(message.message_id)}>
                Delete
              </button>
            </li>
          );
        })}
        {local.map((message) => (
          <li key={message.localId} className={`queued-item queued-${message.state}`}>
            <span className="queued-text">{message.text}</span>
            {message.state === "sending" && <span className="muted small">sending…</span>}
            {message.state === "queued" && <span className="muted small">queued</span>}
            {message.state === "failed" && (
              <>
                <span className="error-text small">not sent: {message.error}</span>
                <button type="button" className="button button-ghost small" onClick={() => props.onDismiss(message.localId)}>Dismiss</button>
              </>
            )}
          </li>
        ))}
        {props.steered.map((message) => (
          <li key={message.message_id} className="queued-item queued-steered" data-testid="steered-message">
            <span className="queued-text">{message.text}</span>
            <span className="muted small">sent into the running turn · it takes over at the next safe point</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
