// The message box. While a turn runs, a message goes to the session's queue
// instead, and the button says so.
import { useRef, useState, type ReactNode } from "react";

export interface ComposerProps {
  /** A turn is running or waits for a person: a message queues for the next turn. */
  busy: boolean;
  /** The session can take no messages (its Flow ended). */
  closedReason: string | null;
  onSend: (text: string) => void;
  /** Turn controls (stop, steer) slot in here. */
  controls?: ReactNode;
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
        className="composer-input"
        data-testid="composer-input"
        rows={1}
        value={text}
        disabled={closed}
        placeholder={closed ? props.closedReason ?? "" : props.busy ? "Message the agent — it will be queued for the next turn" : "Message the agent"}
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
        <button type="submit" className="button button-primary" data-testid="send-button" disabled={closed || text.trim() === ""}>
          {props.busy ? "Queue" : "Send"}
        </button>
      </div>
      <div className="composer-hint muted small">Enter to send · Shift+Enter for a new line</div>
    </form>
  );
}
