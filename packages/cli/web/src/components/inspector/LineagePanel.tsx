// Where a forked session came from (its source session and the turn it
// continues after, with a link that opens the source), and the sessions
// forked from this one, each a link that opens it.
import type { SessionInspection } from "../../lib/api.ts";
import { Panel } from "./Panels.tsx";

type Lineage = SessionInspection["lineage"];
type Forks = NonNullable<SessionInspection["forks"]>;

/** Whether the panel has anything to show. */
export function hasLineage(inspection: SessionInspection): boolean {
  return (inspection.lineage !== undefined && inspection.lineage !== null) || (inspection.forks?.sessions.length ?? 0) > 0;
}

/** A session ID as a link that opens it in this page (also used by the Sub-agents panel). */
export function SessionLink(props: { sessionId: string; testId: string; onOpenSession: (sessionId: string) => void }) {
  return (
    <a
      href={`/sessions/${encodeURIComponent(props.sessionId)}`}
      className="mono"
      data-testid={props.testId}
      onClick={(event) => {
        event.preventDefault();
        props.onOpenSession(props.sessionId);
      }}
    >
      {props.sessionId}
    </a>
  );
}

function boundaryOf(throughTurn: number): string {
  return throughTurn === 0 ? "before its first turn" : `after turn ${throughTurn}`;
}

export function LineagePanel(props: { lineage: Lineage | undefined; forks: SessionInspection["forks"]; onOpenSession: (sessionId: string) => void }) {
  const { lineage } = props;
  const forks: Forks | undefined = props.forks !== undefined && props.forks.sessions.length > 0 ? props.forks : undefined;
  return (
    <Panel title="Lineage" testId="lineage-panel">
      {lineage !== undefined && lineage !== null && (
        <p className="lineage">
          Forked from <SessionLink sessionId={lineage.sourceSessionId} testId="lineage-source" onOpenSession={props.onOpenSession} />{" "}
          {boundaryOf(lineage.throughTurn)}: {lineage.inheritedMessageCount} messages and their tool results were inherited; nothing ran again.
        </p>
      )}
      {forks !== undefined && (
        <>
          <h4 id="lineage-forks-heading">Forks of this session</h4>
          <ul className="lineage-forks" aria-labelledby="lineage-forks-heading" data-testid="lineage-forks">
            {forks.sessions.map((fork) => (
              <li key={fork.sessionId}>
                <SessionLink sessionId={fork.sessionId} testId="lineage-fork" onOpenSession={props.onOpenSession} /> continues {boundaryOf(fork.throughTurn)}
              </li>
            ))}
          </ul>
          {!forks.complete && <p className="muted">Looked at the first {forks.scanned} sessions of this agent only; there may be more forks.</p>}
        </>
      )}
    </Panel>
  );
}
