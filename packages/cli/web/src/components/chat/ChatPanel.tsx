// The chat of one session: loads the stored conversation and its resume
// token from `GET /api/chat/:id`, then mounts the live chat (ChatView.tsx)
// on it, or offers to try again when the load fails.
import { useEffect, useState } from "react";
import { api, type ChatSnapshot } from "../../lib/api.ts";
import { ChatView, type ChatViewProps } from "./ChatView.tsx";
import { TypingDots } from "./MessageList.tsx";

export type ChatPanelProps = Omit<ChatViewProps, "initial">;

/** Loads the stored conversation, then mounts the live chat on it. */
export function ChatPanel(props: ChatPanelProps) {
  const [initial, setInitial] = useState<ChatSnapshot | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const controller = new AbortController();
    setInitial(null);
    setError(null);
    api.chat(props.sessionId, controller.signal).then(setInitial, (reason: unknown) => {
      if (!controller.signal.aborted) setError(reason instanceof Error ? reason : new Error(String(reason)));
    });
    return () => controller.abort();
  }, [props.sessionId, attempt]);

  if (error !== null) {
    return (
      <div className="chat-state">
        <p className="error-text">Cannot load the conversation: {error.message}</p>
        <button type="button" className="button" onClick={() => setAttempt(attempt + 1)}>Try again</button>
      </div>
    );
  }
  if (initial === null) {
    return (
      <div className="chat-state">
        <TypingDots />
      </div>
    );
  }
  return <ChatView key={props.sessionId} {...props} initial={initial} />;
}

