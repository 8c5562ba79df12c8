// The live AgentEvents of the session, as they arrive over Server-Sent
// Events. Text deltas of one Step attempt fold into one line. Each line shows
// when its event was written: a tab that opens replays the retained events,
// so the time they arrive says nothing about when they happened.
import { useLayoutEffect, useMemo, useRef, useState } from "react";
import { eventFamilyOf, eventText, summarizeEvent } from "../../lib/event-summary.ts";
import { formatClock, oneLine } from "../../lib/format.ts";
import type { EventStreamState, ReceivedEvent } from "../../lib/hooks.ts";

interface LogLine {
  key: number;
  type: string;
  family: string;
  turnId: string | null;
  step: string;
  attempt: number;
  /** When the event was written (ms since epoch), or when this tab received it from a server that does not say. */
  at: number;
  isWriteTime: boolean;
  summary: string;
  count: number;
  payload: Record<string, unknown>;
}

function fold(events: readonly ReceivedEvent[]): LogLine[] {
  const lines: LogLine[] = [];
  for (const event of events) {
    const last = lines.at(-1);
    const family = eventFamilyOf(event.type);
    if (family === "text" && last !== undefined && last.type === event.type && last.step === event.step_execution_id && last.attempt === event.attempt) {
      last.count += 1;
      last.summary += eventText(event.payload.text);
      continue;
    }
    lines.push({
      key: event.seq,
      type: event.type,
      family,
      turnId: event.turn_id,
      step: event.step_execution_id,
      attempt: event.attempt,
      at: event.written_at === null ? event.receivedAt : Date.parse(event.written_at),
      isWriteTime: event.written_at !== null,
      summary: family === "text" ? eventText(event.payload.text) : summarizeEvent(event),
      count: 1,
      payload: event.payload,
    });
  }
  return lines;
}

const stateLabels: Record<EventStreamState, string> = {
  connecting: "connecting",
  open: "live",
  reconnecting: "reconnecting",
  closed: "disconnected",
};

export function EventLog(props: { events: readonly ReceivedEvent[]; state: EventStreamState; onClear: () => void }) {
  const lines = useMemo(() => fold(props.events), [props.events]);
  const [hideText, setHideText] = useState(false);
  const [selected, setSelected] = useState<number | null>(null);
  const shown = hideText ? lines.filter((line) => line.family !== "text") : lines;
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  useLayoutEffect(() => {
    const element = scroller.current;
    if (element !== null && stick.current) element.scrollTop = element.scrollHeight;
  }, [shown.length, lines.at(-1)?.summary]);

  return (
    <div className="event-log" data-testid="event-log">
      <div className="event-toolbar">
        <span className={`live-dot live-${props.state}`} aria-hidden="true" /> <span className="small">{stateLabels[props.state]}</span>
        <span className="muted small">· {props.events.length} events</span>
        <span className="spacer" />
        <label className="small toggle">
          <input type="checkbox" checked={hideText} onChange={(event) => setHideText(event.target.checked)} /> hide text
        </label>
        <button type="button" className="button button-ghost small" onClick={props.onClear}>Clear</button>
      </div>
      <div
        className="event-scroll"
        ref={scroller}
        tabIndex={0}
        role="region"
        aria-label="Event list"
        onScroll={(event) => {
          const element = event.currentTarget;
          stick.current = element.scrollHeight - element.scrollTop - element.clientHeight < 40;
        }}
      >
        {shown.length === 0 && <div className="empty-panel">Events appear here as the session emits them: send a message.</div>}
        {shown.map((line) => (
          <div key={line.key} className={`event-row family-${line.family}${selected === line.key ? " selected" : ""}`} data-event-type={line.type}>
          {/* A button, so the row opens from the keyboard too; text lines have no payload to open. */}
          <button type="button" className="event-line" aria-expanded={line.family === "text" ? undefined : selected === line.key} onClick={() => setSelected(selected === line.key ? null : line.key)}>
            <time className="event-time mono" dateTime={new Date(line.at).toISOString()} title={line.isWriteTime ? "when the event was written" : "when this tab received it"}>{formatClock(new Date(line.at).toISOString())}</time>
            <span className={`event-type type-${line.family}`}>{line.type}{line.count > 1 ? ` ×${line.count}` : ""}</span>
            <span className="event-where mono" title={`turn ${line.turnId ?? "–"}, Step execution ${line.step}, attempt ${line.attempt}`}>
              {line.turnId ?? "–"} · #{line.step}{line.attempt > 1 ? `·a${line.attempt}` : ""}
            </span>
            <span className="event-summary" title={line.summary}>{line.family === "text" ? `“${oneLine(line.summary, 200)}”` : line.summary}</span>
          </button>
          {selected === line.key && line.family !== "text" && <pre className="json event-payload" tabIndex={0} aria-label={`Payload of ${line.type}`}>{JSON.stringify(line.payload, null, 2)}</pre>}
          </div>
        ))}
      </div>
    </div>
  );
}
