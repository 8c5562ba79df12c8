// Slot for controls over the running turn: "Stop turn" (`cancel_turn`) and
// "Steer" (`steer_user_message`, which moves a queued message into the
// running turn).
//
// Neither has a dev server route yet, and the session Flow does not accept
// cancellation or steering yet, so nothing renders. When they land: show
// "Stop turn" while a turn is active, next to the composer's send button, and
// a "Steer now" action on each queued message (see QueuedMessages).
// "Stop session" in the session header is a different thing: it stops the
// whole Flow (`POST /api/sessions/:id/stop`).
export function TurnControls(_props: { sessionId: string; activeTurnId: string | null }) {
  return null;
}
