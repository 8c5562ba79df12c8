// One open session: its header, the chat, and the inspector beside it.
// The inspector's snapshot is read every 2 s and again on each live event,
// and the chat reads the session's turn and queue from the same snapshot.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { announce } from "../lib/a11y.tsx";
import { api, type SessionSummary } from "../lib/api.ts";
import { usePolledResource, useAgentEvents, type ReceivedEvent } from "../lib/hooks.ts";
import { ChatPanel } from "./chat/ChatPanel.tsx";
import { liveSessionOf } from "./chat/live-session.ts";
import { Inspector, type InspectorTab } from "./inspector/Inspector.tsx";
import { describeSessionStatus, SessionStatusBadge, type SessionAttention } from "./StatusBadge.tsx";
import { ModelPicker } from "./ModelPicker.tsx";

export type LayoutMode = "chat" | "split" | "inspector";

export interface SessionWorkspaceProps {
  sessionId: string;
  summary: SessionSummary | undefined;
  layout: LayoutMode;
  onLayout: (layout: LayoutMode) => void;
  inspectorTab: InspectorTab;
  onInspectorTab: (tab: InspectorTab) => void;
  onSessionsChanged: () => void;
  /** What in the open session waits on a person or a timer, which the session list cannot see. */
  onAttention: (sessionId: string, attention: SessionAttention) => void;
  /** Opens another session: a new fork, or a fork's source. */
  onOpenSession: (sessionId: string) => void;
}

export function SessionWorkspace(props: SessionWorkspaceProps) {
  const { sessionId } = props;
  const inspection = usePolledResource(`inspect:${sessionId}`, (signal) => api.inspect(sessionId, signal), 2000);
  const { refresh } = inspection;
  const onEvent = useCallback(
    (event: ReceivedEvent) => {
      // Deltas change nothing the snapshot shows; everything else may.
      if (!event.type.endsWith("_delta")) refresh();
    },
    [refresh],
  );
  const events = useAgentEvents(api.eventsUrl(sessionId), onEvent);
  const live = useMemo(() => liveSessionOf(inspection.data, inspection.loadedAt), [inspection.data, inspection.loadedAt]);
  const [stopping, setStopping] = useState(false);

  const flowStatus = inspection.data?.status ?? props.summary?.status ?? "running";
  const agentStatus = inspection.data?.snapshot.state?.status ?? props.summary?.agentStatus ?? null;
  const approvals = live.pendingInterrupts.filter((interrupt) => interrupt.kind === "approval").length;
  const questions = live.pendingInterrupts.filter((interrupt) => interrupt.kind === "question").length;
  const waitUntil = [...live.toolCalls.values()].flatMap((call) => (call.status === "waiting_for_timer" && call.wait_until !== undefined ? [call.wait_until] : [])).sort()[0] ?? null;
  const attention = useMemo<SessionAttention>(() => ({ approvals, questions, waitUntil }), [approvals, questions, waitUntil]);
  const { onAttention } = props;
  useEffect(() => {
    onAttention(sessionId, attention);
    // Another session's snapshot is not read: forget what it waited for when it closes.
    return () => onAttention(sessionId, {});
  }, [onAttention, sessionId, attention]);

  // Tell a screen reader what changed: a new approval or question, and the session's status.
  // The working states (thinking, running tools, …) change with every Step: they are announced once, as "working".
  const described = inspection.data === undefined ? null : describeSessionStatus(flowStatus, agentStatus, attention);
  const statusLabel = described === null ? null : described.pulse && described.tone !== "amber" && described.tone !== "indigo" ? "working" : described.label;
  const lastStatus = useRef<string | null>(null);
  const seenInterrupts = useRef<Set<string> | null>(null);
  useEffect(() => {
    if (inspection.data === undefined) return;
    const pending = live.pendingInterrupts;
    if (seenInterrupts.current === null) seenInterrupts.current = new Set(pending.map((interrupt) => interrupt.interrupt_id));
    for (const interrupt of pending) {
      if (seenInterrupts.current.has(interrupt.interrupt_id)) continue;
      seenInterrupts.current.add(interrupt.interrupt_id);
      announce(interrupt.kind === "question"
        ? `The agent asks: ${interrupt.question ?? interrupt.tool_name}`
        : `${interrupt.tool_name} needs your approval.`);
    }
  }, [inspection.data, live.pendingInterrupts]);
  useEffect(() => {
    if (statusLabel === null) return;
    if (lastStatus.current !== null && lastStatus.current !== statusLabel) announce(`Session ${statusLabel}.`);
    lastStatus.current = statusLabel;
  }, [statusLabel]);

  const stop = async (): Promise<void> => {
    if (!window.confirm(`Stop session ${sessionId}? Its Flow ends and it takes no more messages.`)) return;
    setStopping(true);
    try {
      await api.stopSession(sessionId);
      // The button and the message box go with the Flow: the heading keeps the focus in the session.
      document.getElementById("workspace-heading")?.focus();
    } catch (error) {
      window.alert(`Could not stop the session: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      setStopping(false);
      refresh();
      props.onSessionsChanged();
    }
  };

  // Edit and retry fork the session before the turn and send the text there; this session stays as it is.
  const fork = useCallback(async (throughTurn: number, text: string): Promise<void> => {
    try {
      const forked = await api.forkSession(sessionId, throughTurn, text);
      props.onSessionsChanged();
      props.onOpenSession(forked.sessionId);
    } catch (error) {
      window.alert(`Could not fork the session: ${error instanceof Error ? error.message : String(error)}`);
    }
  }, [sessionId, props.onSessionsChanged, props.onOpenSession]);

  const onActivity = useCallback(() => {
    refresh();
    props.onSessionsChanged();
  }, [refresh, props.onSessionsChanged]);

  return (
    <main className={`workspace layout-${props.layout}`} id="main-content" tabIndex={-1} aria-labelledby="workspace-heading">
      <header className="workspace-head">
        <div className="workspace-title">
          <h1 className="mono" id="workspace-heading" tabIndex={-1} title={sessionId}>{sessionId}</h1>
          <SessionStatusBadge flowStatus={flowStatus} agentStatus={agentStatus} attention={attention} />
          <span className="muted small">{inspection.data?.flowType ?? props.summary?.agent ?? ""}</span>
        </div>
        <div className="workspace-actions">
          {flowStatus === "running" && (inspection.data?.features?.modelChoices?.length ?? 0) > 1 && (
            <ModelPicker
              sessionId={sessionId}
              choices={inspection.data?.features?.modelChoices ?? []}
              settings={inspection.data?.snapshot.session_settings ?? {}}
              onChanged={refresh}
            />
          )}
          {flowStatus === "running" && (
            <button type="button" className="button button-ghost small danger" onClick={() => void stop()} disabled={stopping} title="Stop the session's Flow for good">
              {stopping ? "Stopping…" : "Stop session"}
            </button>
          )}
          <div className="segmented" role="group" aria-label="Layout">
            {(["chat", "split", "inspector"] as const).map((mode) => (
              <button key={mode} type="button" className={props.layout === mode ? "active" : ""} onClick={() => props.onLayout(mode)} aria-pressed={props.layout === mode}>
                {mode === "chat" ? "Chat" : mode === "split" ? "Split" : "Inspector"}
              </button>
            ))}
          </div>
        </div>
      </header>
      <div className="workspace-body">
        {props.layout !== "inspector" && (
          <div className="chat-pane">
            <ChatPanel sessionId={sessionId} live={live} onActivity={onActivity} onFork={fork} />
          </div>
        )}
        {props.layout !== "chat" && (
          <div className="inspector-pane">
            <Inspector
              inspection={inspection.data}
              error={inspection.error}
              events={events.events}
              eventState={events.state}
              onClearEvents={events.clear}
              tab={props.inspectorTab}
              onTab={props.onInspectorTab}
              onOpenSession={props.onOpenSession}
            />
          </div>
        )}
      </div>
    </main>
  );
}
