// Messages sent while a turn runs wait in the session's queue (durably, in
// the session's channel); each starts the next turn, oldest first. This strip
// shows them above the composer: the session's queue from its snapshot, plus
// the ones this tab is still sending.
import type { WireQueuedMessage } from "../../lib/api.ts";
import { formatRelative } from "../../lib/format.ts";
import { ClockIcon } from "../Icons.tsx";

/** A message this tab sent through the queue path, until the session's snapshot shows it. */
export interface LocalQueuedMessage {
  localId: string;
  text: string;
  state: "sending" | "queued" | "failed";
  error?: string;
  /** When it was sent or acknowledged (ms since epoch). */
  at: number;
}

export function QueuedMessages(props: { queued: WireQueuedMessage[]; local: LocalQueuedMessage[]; onDismiss: (localId: string) => void }) {
  const local = props.local.filter((message) => message.state !== "queued" || !props.queued.some((queued) => queued.text === message.text));
  const count = props.queued.length + local.filter((message) => message.state !== "failed").length;
  if (count === 0 && local.length === 0) return null;
  return (
    <div className="queued" data-testid="queued-messages">
      <div className="queued-head">
        <span className="queued-icon"><ClockIcon /></span>
        {count === 1 ? "1 message queued" : `${count} messages queued`}
        <span className="muted"> · each starts the next turn when this one ends</span>
      </div>
      <ul className="queued-list">
        {props.queued.map((message) => (
          <li key={message.message_id} className="queued-item">
            <span className="queued-text">{message.text}</span>
            <span className="muted small">{formatRelative(message.sent_at)}</span>
            {/* Steering ("send into the running turn") and deleting a queued message slot in here once the dev server has routes for them. */}
          </li>
        ))}
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
      </ul>
    </div>
  );
}
