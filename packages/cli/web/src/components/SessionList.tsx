// The left column: every session of the hosted agents, newest first.
import { useState } from "react";
import type { SessionSummary } from "../lib/api.ts";
import { formatRelative } from "../lib/format.ts";
import { useNow } from "../lib/hooks.ts";
import { AlertIcon, PlusIcon } from "./Icons.tsx";
import { SessionStatusBadge, type SessionAttention } from "./StatusBadge.tsx";

export interface SessionListProps {
  /** Open as a drawer (narrow windows, behind the menu button). */
  open: boolean;
  /** Escape closes the drawer. */
  onClose: () => void;
  sessions: SessionSummary[] | undefined;
  error: Error | undefined;
  agents: string[];
  selectedId: string | null;
  /** What waits on a person or a timer in sessions whose snapshot this tab has read (the open one). */
  attention: Readonly<Record<string, SessionAttention>>;
  onSelect: (sessionId: string) => void;
  onCreate: (agent: string | undefined) => Promise<void>;
}

/**
 * What a session's badge shows waiting on a person: the open session's live
 * snapshot when the tab has one (it also knows durable waits), else the
 * pending interrupts `/api/sessions` counted.
 */
function attentionOf(session: SessionSummary, live: SessionAttention | undefined, isOpen: boolean): SessionAttention {
  if (isOpen && live !== undefined) return live;
  return { approvals: session.pendingApprovals, questions: session.pendingQuestions };
}

export function SessionList(props: SessionListProps) {
  const now = useNow(5000);
  const [creating, setCreating] = useState(false);
  const [createError, setCreateError] = useState<string | null>(null);
  const [agent, setAgent] = useState<string | undefined>(undefined);
  const [filter, setFilter] = useState("");

  const create = async (): Promise<void> => {
    if (creating) return;
    setCreating(true);
    setCreateError(null);
    try {
      await props.onCreate(agent ?? props.agents[0]);
    } catch (error) {
      setCreateError(error instanceof Error ? error.message : String(error));
    } finally {
      setCreating(false);
    }
  };

  const sessions = (props.sessions ?? []).filter((session) => filter === "" || session.sessionId.includes(filter) || session.agent.toLowerCase().includes(filter.toLowerCase()));

  return (
    <aside
      id="session-list"
      className={`sidebar${props.open ? " open" : ""}`}
      aria-label="Sessions"
      onKeyDown={(event) => {
        if (event.key === "Escape" && props.open) {
          event.preventDefault();
          props.onClose();
        }
      }}
    >
      <div className="sidebar-head">
        <div className="sidebar-title">
          <span>Sessions</span>
          {props.sessions !== undefined && <span className="count">{props.sessions.length}</span>}
        </div>
        {props.agents.length > 1 && (
          <select className="agent-select" value={agent ?? props.agents[0]} onChange={(event) => setAgent(event.target.value)} aria-label="Agent for new sessions">
            {props.agents.map((name) => <option key={name} value={name}>{name}</option>)}
          </select>
        )}
        <button type="button" className="button button-primary new-session" onClick={() => void create()} aria-disabled={creating}>
          <PlusIcon /> {creating ? "Starting…" : "New session"}
        </button>
        {createError !== null && <div className="inline-error">{createError}</div>}
        {(props.sessions?.length ?? 0) > 6 && (
          <input className="filter" placeholder="Filter sessions" value={filter} onChange={(event) => setFilter(event.target.value)} aria-label="Filter sessions" />
        )}
      </div>
      <nav className="session-list" aria-label="Session list">
        {props.error !== undefined && <div className="inline-error">Cannot list sessions: {props.error.message}</div>}
        {props.sessions === undefined && props.error === undefined && <div className="muted pad">Loading…</div>}
        {props.sessions?.length === 0 && (
          <div className="sidebar-empty">
            <p>No sessions yet.</p>
            <p className="muted">Start one to chat with the agent.</p>
          </div>
        )}
        {sessions.map((session) => (
          <button
            type="button"
            key={session.sessionId}
            className={`session-item${session.sessionId === props.selectedId ? " selected" : ""}`}
            onClick={() => props.onSelect(session.sessionId)}
            aria-current={session.sessionId === props.selectedId ? "page" : undefined}
          >
            <div className="session-item-top">
              {/* Cut from the start: generated IDs differ at their end. */}
              <span className="session-id" dir="rtl" title={session.sessionId}><bdi>{session.sessionId}</bdi></span>
              <SessionStatusBadge flowStatus={session.status} agentStatus={session.agentStatus} attention={attentionOf(session, props.attention[session.sessionId], session.sessionId === props.selectedId)} />
            </div>
            <div className="session-item-meta">
              <span>{session.agent}</span>
              <span className="dot-sep">·</span>
              <span>{session.turnCount} {session.turnCount === 1 ? "turn" : "turns"}</span>
              <span className="dot-sep">·</span>
              <span title={session.updatedAt}>{formatRelative(session.updatedAt, now)}</span>
            </div>
            {session.lastTurnError !== null && <div className="session-item-error" title={session.lastTurnError}><AlertIcon /> {session.lastTurnError}</div>}
          </button>
        ))}
      </nav>
    </aside>
  );
}
