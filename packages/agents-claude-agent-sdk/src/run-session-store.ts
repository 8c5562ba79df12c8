/**
 * The `SessionStore` of one run of the harness: it hands the harness the
 * session's stored transcript to resume, and keeps what the harness mirrors
 * back, so the runner can store the run's new entries as session messages.
 * The session's committed state is the only durable copy; this store lives
 * for one `RunModel` attempt.
 */
import type { SessionKey, SessionStore, SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";

/** An in-memory store of one session's main transcript, for one run. */
export class RunSessionStore implements SessionStore {
  private readonly loaded: readonly SessionStoreEntry[];
  private readonly sessionId: string;
  private readonly appended: SessionStoreEntry[] = [];

  /** `transcript` is what a resumed run loads; empty for a session's first run. */
  constructor(sessionId: string, transcript: readonly SessionStoreEntry[]) {
    this.sessionId = sessionId;
    this.loaded = transcript;
  }

  async append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    // Subagent transcripts (a subpath) are not part of the session's messages.
    if (key.sessionId !== this.sessionId || key.subpath !== undefined) return;
    this.appended.push(...entries);
  }

  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    if (key.sessionId !== this.sessionId || key.subpath !== undefined || this.loaded.length === 0) return null;
    return [...this.loaded];
  }

  /** What the harness wrote in this run, in order. */
  newEntries(): SessionStoreEntry[] {
    return [...this.appended];
  }
}
