// How the chat reads the errors `useChat` hands it: the server's
// `{ "error": … }` text, and whether a failure was the network's.

/** The server's `{ "error": … }` text when the transport passed its JSON body on as the message. */
export function errorTextOf(error: Error): string {
  try {
    const body = JSON.parse(error.message) as { error?: unknown };
    if (typeof body.error === "string") return body.error;
  } catch {
    // Not JSON: the message as it is.
  }
  return error.message;
}

/** What `perdure dev` answers (503) while it starts again: its store and Worker are not open yet (commands/dev.ts). */
export const devStartingText = "perdure dev is starting; retry shortly";

/**
 * A fetch that failed on the network, or that reached `perdure dev` while it
 * was starting again: either way the chat reconnects rather than report the
 * turn as failed.
 */
export function isDisconnect(error: Error | undefined): boolean {
  if (error === undefined) return false;
  const message = error.message.toLowerCase();
  return error instanceof TypeError || message.includes("failed to fetch") || message.includes("network") || message === "load failed"
    || errorTextOf(error) === devStartingText;
}
