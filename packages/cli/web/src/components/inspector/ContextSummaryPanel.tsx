// The session's context summary: what compaction folded into one text, and
// through which message, so a person sees what the model now starts from.
import type { WireContextSummary } from "../../lib/api.ts";
import { formatClock } from "../../lib/format.ts";
import { Panel } from "./Panels.tsx";

export function ContextSummaryPanel(props: { summary: WireContextSummary }) {
  const { summary } = props;
  return (
    <Panel title="Context summary" testId="context-summary-panel" aside={<span className="muted small">generation {summary.generation}</span>}>
      <dl className="kv">
        <div>
          <dt>covers</dt>
          <dd>messages through #{summary.last_sequence}</dd>
        </div>
        <div>
          <dt>written</dt>
          <dd><span title={summary.created_at}>{summary.turn_id === "" ? "" : `${summary.turn_id} · `}{formatClock(summary.created_at)}</span></dd>
        </div>
      </dl>
      <p className="context-summary-text" data-testid="context-summary-text">{summary.summary}</p>
    </Panel>
  );
}
