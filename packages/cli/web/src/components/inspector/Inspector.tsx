// The session inspector: what the durable session is made of right now.
import { useRef, useState, type KeyboardEvent } from "react";
import type { SessionInspection } from "../../lib/api.ts";
import type { EventStreamState, ReceivedEvent } from "../../lib/hooks.ts";
import { useNow } from "../../lib/hooks.ts";
import { EventLog } from "./EventLog.tsx";
import { InterruptsPanel, Panel, SessionSummaryPanel, StatePanel, ToolCallsPanel, UsagePanel } from "./Panels.tsx";
import { MessageStoragePanel } from "./MessageStoragePanel.tsx";
import { ContextSummaryPanel } from "./ContextSummaryPanel.tsx";
import { StepTimeline } from "./StepTimeline.tsx";
import { hasLineage, LineagePanel } from "./LineagePanel.tsx";

export type InspectorTab = "overview" | "state" | "events";

export interface InspectorProps {
  inspection: SessionInspection | undefined;
  error: Error | undefined;
  events: readonly ReceivedEvent[];
  eventState: EventStreamState;
  onClearEvents: () => void;
  tab: InspectorTab;
  onTab: (tab: InspectorTab) => void;
  /** Opens another session, such as a fork's source. */
  onOpenSession: (sessionId: string) => void;
}

export function Inspector(props: InspectorProps) {
  const now = useNow(1000);
  const { inspection } = props;
  const [paused, setPaused] = useState(false);
  const [frozenNow, setFrozenNow] = useState(now);
  const timelineNow = paused ? frozenNow : now;

  const tabs: { id: InspectorTab; label: string; count?: number }[] = [
    { id: "overview", label: "Timeline" },
    { id: "state", label: "State & usage" },
    { id: "events", label: "Events", count: props.events.length },
  ];

  // The WAI-ARIA tabs pattern: one tab in the Tab order, arrows, Home and End move between tabs and select them.
  const tabList = useRef<HTMLDivElement>(null);
  const onTabKey = (event: KeyboardEvent<HTMLButtonElement>): void => {
    const index = tabs.findIndex((tab) => tab.id === props.tab);
    const target = event.key === "ArrowRight" ? (index + 1) % tabs.length
      : event.key === "ArrowLeft" ? (index - 1 + tabs.length) % tabs.length
        : event.key === "Home" ? 0
          : event.key === "End" ? tabs.length - 1
            : null;
    const next = target === null ? undefined : tabs[target];
    if (next === undefined) return;
    event.preventDefault();
    props.onTab(next.id);
    tabList.current?.querySelector<HTMLElement>(`#inspector-tab-${next.id}`)?.focus();
  };

  return (
    <section className="inspector" aria-label="Session inspector" data-testid="inspector">
      <div className="inspector-tabs" role="tablist" aria-label="Inspector views" ref={tabList}>
        {tabs.map((tab) => (
          <button
            key={tab.id}
            id={`inspector-tab-${tab.id}`}
            type="button"
            role="tab"
            aria-selected={props.tab === tab.id}
            aria-controls="inspector-panel"
            tabIndex={props.tab === tab.id ? 0 : -1}
            className={`tab${props.tab === tab.id ? " active" : ""}`}
            onClick={() => props.onTab(tab.id)}
            onKeyDown={onTabKey}
          >
            {tab.label}
            {tab.count !== undefined && tab.count > 0 && <span className="count">{tab.count > 999 ? "999+" : tab.count}</span>}
          </button>
        ))}
      </div>
      <div className="inspector-panel" id="inspector-panel" role="tabpanel" aria-labelledby={`inspector-tab-${props.tab}`}>
      {props.error !== undefined && <div className="inline-error">Cannot read the session: {props.error.message}</div>}
      {inspection === undefined && props.error === undefined && <div className="empty-panel">Reading the session…</div>}
      {inspection !== undefined && props.tab === "overview" && (
        <div className="inspector-body">
          <SessionSummaryPanel inspection={inspection} now={now} />
          {hasLineage(inspection) && <LineagePanel lineage={inspection.lineage} forks={inspection.forks} onOpenSession={props.onOpenSession} />}
          <Panel
            title="Step timeline"
            testId="timeline-panel"
            aside={
              <button
                type="button"
                className="button button-ghost small"
                onClick={() => {
                  setFrozenNow(now);
                  setPaused(!paused);
                }}
                title="Freeze the running bars where they are"
              >
                {paused ? "▶ follow" : "❚❚ freeze"}
              </button>
            }
          >
            <StepTimeline inspection={inspection} now={timelineNow} />
          </Panel>
          <InterruptsPanel interrupts={inspection.snapshot.pending_interrupts} now={now} />
          <ToolCallsPanel
            calls={inspection.snapshot.tool_calls}
            activeTurnId={inspection.snapshot.state?.active_turn_id ?? null}
            history={inspection.snapshot.messages.filter((message) => message.role === "tool").slice(-20)}
          />
        </div>
      )}
      {inspection !== undefined && props.tab === "state" && (
        <div className="inspector-body inspector-grid">
          <StatePanel inspection={inspection} />
          <UsagePanel usage={inspection.snapshot.usage} />
          {inspection.messageStorage !== undefined && <MessageStoragePanel storage={inspection.messageStorage} />}
          {inspection.snapshot.context_summary !== null && <ContextSummaryPanel summary={inspection.snapshot.context_summary} />}
        </div>
      )}
      {props.tab === "events" && <EventLog events={props.events} state={props.eventState} onClear={props.onClearEvents} />}
      </div>
    </section>
  );
}
