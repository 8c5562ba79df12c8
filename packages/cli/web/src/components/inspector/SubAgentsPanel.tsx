// The sub-agent tree around a session (`agentTool`): the parent session that
// called this one, and the child sessions it started, each a link that opens it.
import { SessionLink } from "./LineagePanel.tsx";
import type { SubAgentTree } from "../../lib/sub-agents.ts";
import { Panel } from "./Panels.tsx";

export function SubAgentsPanel(props: { tree: SubAgentTree; onOpenSession: (sessionId: string) => void }) {
  const { parent, children } = props.tree;
  return (
    <Panel title="Sub-agents" testId="sub-agents-panel">
      {parent !== null && (
        <p className="lineage" data-testid="sub-agents-parent">
          Called by <SessionLink sessionId={parent.sessionId} testId="sub-agents-parent-link" onOpenSession={props.onOpenSession} /> (tool call{" "}
          <span className="mono">{parent.toolCallId}</span>, depth {parent.depth}).
        </p>
      )}
      {children.length > 0 && (
        <>
          <h4 id="sub-agents-children-heading">Sub-agent sessions started by this one</h4>
          <ul className="lineage-forks" aria-labelledby="sub-agents-children-heading" data-testid="sub-agents-children">
            {children.map((child) => (
              <li key={child.sessionId}>
                <SessionLink sessionId={child.sessionId} testId="sub-agents-child" onOpenSession={props.onOpenSession} /> ({child.agent})
              </li>
            ))}
          </ul>
        </>
      )}
    </Panel>
  );
}
