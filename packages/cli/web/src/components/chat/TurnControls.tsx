// The Stop button of the running turn (`cancel_turn` through
// `POST /api/sessions/:id/cancel`). Stopping aborts a running model call and
// every wait of the turn; a tool that already started runs to its end, and a
// started tool task is abandoned. "Stop session" in the session header is a
// different thing: it stops the whole Flow.
import { useEffect, useState } from "react";
import { announce, focusComposerWhenReady } from "../../lib/a11y.tsx";
import { api } from "../../lib/api.ts";

export interface TurnControlsProps {
  sessionId: string;
  /** The running turn (the newer of the session's snapshot and the turn this tab streams), or null. */
  activeTurnId: string | null;
  /** The running turn can be stopped (a turn this release started). */
  acceptsTurnControl: boolean;
  /** The session took the request to stop `turnId`. */
  onStopped: (turnId: string) => void;
  /** Something changed: read the session again now. */
  onActivity: () => void;
}

export function TurnControls(props: TurnControlsProps) {
  const { sessionId, activeTurnId, onStopped, onActivity } = props;
  /** The turn this tab asked to stop, until another turn is active. */
  const [stopping, setStopping] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (stopping !== null && stopping !== activeTurnId) setStopping(null);
  }, [stopping, activeTurnId]);
  if (activeTurnId === null || !props.acceptsTurnControl) return null;

  const stop = (): void => {
    const turnId = activeTurnId;
    setStopping(turnId);
    setError(null);
    // The button goes once the turn stops: the message box is where the person goes on.
    void focusComposerWhenReady();
    api.cancelTurn(sessionId, turnId).then(
      ({ cancelled }) => {
        // False: the turn ended first (its answer committed before the stop), so there is nothing to stop.
        if (cancelled) {
          onStopped(turnId);
          announce(`Stopped ${turnId.replace("-", " ")}.`);
        }
        else setStopping(null);
        onActivity();
      },
      (failure: unknown) => {
        setStopping(null);
        setError(failure instanceof Error ? failure.message : String(failure));
      },
    );
  };

  return (
    <>
      {error !== null && <span className="error-text small" role="alert">Could not stop: {error}</span>}
      <button
        type="button"
        className="button button-ghost small danger stop-turn-button"
        data-testid="stop-turn"
        disabled={stopping === activeTurnId}
        title="Stop this turn: the model call is aborted and waits end; a tool that already started finishes first"
        onClick={stop}
      >
        {stopping === activeTurnId ? "Stopping…" : "Stop"}
      </button>
    </>
  );
}
