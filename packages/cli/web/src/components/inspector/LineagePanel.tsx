// Where a forked session came from: its source session and the turn it
// continues after, with a link that opens the source.
import type { SessionInspection } from "../../lib/api.ts";
import { Panel } from "./Panels.tsx";

export function LineagePanel(props: { lineage: NonNullable<SessionInspection["lineage"]>; onOpenSession: (sessionId: string) => void }) {
  const { lineage } = props;
  const boundary = lineage.throughTurn === 0 ? "before its first turn" : `after turn ${lineage.throughTurn}`;
  return (
    <Panel title="Lineage" testId="lineage-panel">
      <p className="lineage">
        Forked from{" "}
        <a
          href={`/sessions/${encodeURIComponent(lineage.sourceSessionId)}`}
          className="mono"
          data-testid="lineage-source"
          onClick={(event) => {
            event.preventDefault();
            props.onOpenSession(lineage.sourceSessionId);
          }}
        >
          {lineage.sourceSessionId}
        </a>{" "}
        {boundary}: {lineage.inheritedMessageCount} messages and their tool results were inherited; nothing ran again.
      </p>
    </Panel>
  );
}
