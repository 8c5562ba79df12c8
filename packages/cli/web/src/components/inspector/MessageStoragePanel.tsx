// Where the session's messages are: the AgentMessages window, the archive
// chunks AgentMessageIndex lists (newest first), and deleted history.
import type { MessageStorage } from "../../lib/api.ts";
import { Panel } from "./Panels.tsx";

/** Chunks listed before the rest fold away; a long session keeps many. */
const shownChunks = 12;

export function MessageStoragePanel(props: { storage: MessageStorage }) {
  const { storage } = props;
  const newestFirst = storage.chunks.toReversed();
  return (
    <Panel title="Message storage" count={storage.chunks.length} testId="message-storage-panel">
      <dl className="kv">
        <div>
          <dt>window</dt>
          <dd>
            {storage.windowMessageCount === 0 ? <span className="muted">empty</span> : `${storage.windowMessageCount} messages from ${storage.windowFirstSequence}`}
            {!storage.hasIndex && <span className="muted small"> · no index: every message is in the window</span>}
          </dd>
        </div>
        <div>
          <dt>archived chunks</dt>
          <dd>{storage.chunks.length === 0 ? <span className="muted">none</span> : `${storage.chunks.reduce((sum, chunk) => sum + chunk.messageCount, 0)} messages in ${storage.chunks.length}`}</dd>
        </div>
        <div>
          <dt>deleted history</dt>
          <dd>{storage.deletedBeforeSequence === null ? <span className="muted">none</span> : `messages before ${storage.deletedBeforeSequence}`}</dd>
        </div>
      </dl>
      {newestFirst.length > 0 && (
        <ul className="plain-list" data-testid="message-chunks">
          {newestFirst.slice(0, shownChunks).map((chunk) => (
            <li key={chunk.firstSequence} className="mono small">
              {chunk.firstSequence === chunk.lastSequence ? `#${chunk.firstSequence}` : `#${chunk.firstSequence}–${chunk.lastSequence}`}
              <span className="muted"> · {chunk.messageCount} {chunk.messageCount === 1 ? "message" : "messages"}{chunk.isOversized ? " · oversized, beside the window" : ""}</span>
            </li>
          ))}
          {newestFirst.length > shownChunks && <li className="muted small">and {newestFirst.length - shownChunks} older chunks</li>}
        </ul>
      )}
    </Panel>
  );
}
