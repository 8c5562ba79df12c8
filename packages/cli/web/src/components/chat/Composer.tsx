// The message box. While a turn runs, a message goes to the session's queue
// instead, and the button says so. "Plan first" sends the message in plan
// mode: the agent drafts a plan, and nothing runs until it is approved.
import { useRef, useState, type ReactNode } from "react";

export interface ComposerProps {
  /** The session the message box writes to (the skip link and focus moves find it by it). */
  sessionId: string;
  /** A turn is running or waits for a person: a message queues for the next turn. */
  busy: boolean;
  /** The session can take no messages (its Flow ended). */
  closedReason: string | null;
  onSend: (text: string) => void;
  /** Turn controls (stop, steer) slot in here. */
  controls?: ReactNode;
  /** The plan-mode toggle, for agents that may plan first; absent hides it. */
  planMode?: { enabled: boolean; onChange: (enabled: boolean) => void } | undefined;
}

export function Composer(props: ComposerProps) {
  const [text, setText] = useState("");
  const area = useRef<HTMLTextAreaElement>(null);
  const closed = props.closedReason !== null;

  const submit = (): void => {
    const trimmed = text.trim();
    if (trimmed === "" || closed) return;
    props.onSend(trimmed);
    setText("");
    area.current?.focus();
  };

  return (
    <form
      className={`composer${props.busy ? " composer-busy" : ""}`}
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <textarea
        ref={area}
        id="composer-input"
        className="composer-input"
        data-testid="composer-input"
        data-session-id={props.sessionId}
        aria-label="Message the agent"
        aria-describedby="composer-hint"
        rows={1}
        value={text}
        disabled={closed}
        placeholder={closed ? props.closedReason ?? "" : props.busy ? "Message the agent — it will be queued for the next turn" : props.planMode?.enabled === true ? "Describe the task — the agent drafts a plan for you to approve" : "Message the agent"}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            submit();
          }
        }}
      />
      <div className="composer-actions">
        {props.controls}
        {props.planMode !== undefined && (
          <button
            type="button"
            className={`button button-ghost small plan-toggle-button${props.planMode.enabled ? " active" : ""}`}
            aria-pressed={props.planMode.enabled}
            disabled={closed}
            title="Plan first: the agent writes a plan with its tasks, and nothing runs until you approve it"
            onClick={() => props.planMode?.onChange(!(props.planMode.enabled))}
          >
            Plan first
          </button>
        )}
        <button type="submit" className="button button-primary" data-testid="send-button" disabled={closed || text.trim() === ""}>
          {props.busy ? "Queue" : "Send"}
        </button>
      </div>
      <div className="composer-hint muted small" id="composer-hint">Enter to send · Shift+Enter for a new line</div>
    </form>
  );
}
