// The inspector's smaller panels: the session at a glance, pending
// interrupts, tool call records, usage, and the agent's state.
import type { ReactNode } from "react";
import type { SessionInspection, WireInterrupt, WireToolCall, WireUsage } from "../../lib/api.ts";
import { formatClock, formatCount, formatDuration, formatRelative, oneLine } from "../../lib/format.ts";
import { Badge, SessionStatusBadge, type Tone } from "../StatusBadge.tsx";
import { ValueView } from "../ValueView.tsx";

export function Panel(props: { title: string; count?: number; children: ReactNode; aside?: ReactNode; testId?: string }) {
  return (
    <section className="panel" data-testid={props.testId}>
      <header className="panel-head">
        <h3>{props.title}</h3>
        {props.count !== undefined && <span className="count">{props.count}</span>}
        <span className="spacer" />
        {props.aside}
      </header>
      <div className="panel-body">{props.children}</div>
    </section>
  );
}

function Stat(props: { label: string; value: ReactNode; tone?: "red" }) {
  return (
    <div className={`stat${props.tone === "red" ? " stat-red" : ""}`}>
      <div className="stat-value">{props.value}</div>
      <div className="stat-label">{props.label}</div>
    </div>
  );
}

export function SessionSummaryPanel(props: { inspection: SessionInspection; now: number }) {
  const { inspection } = props;
  const state = inspection.snapshot.state;
  const failedAttempts = inspection.timeline.reduce((sum, execution) => sum + execution.attempts.filter((attempt) => attempt.status === "failed").length, 0);
  const approvals = inspection.snapshot.pending_interrupts.filter((interrupt) => interrupt.kind === "approval").length;
  const questions = inspection.snapshot.pending_interrupts.filter((interrupt) => interrupt.kind === "question").length;
  const waitUntil = inspection.snapshot.tool_calls.flatMap((call) => (call.status === "waiting_for_timer" && call.wait_until !== undefined ? [call.wait_until] : [])).sort()[0] ?? null;
  return (
    <div className="summary">
      <div className="summary-line">
        <SessionStatusBadge flowStatus={inspection.status} agentStatus={state?.status ?? null} attention={{ approvals, questions, waitUntil }} />
        <span className="muted small">Flow <strong>{inspection.status}</strong></span>
        {state?.active_turn_id != null && <span className="muted small">· {inspection.status === "running" ? "active" : "interrupted"} <strong>{state.active_turn_id}</strong></span>}
        <span className="spacer" />
        <span className="muted small" title={inspection.createdAt}>started {formatRelative(inspection.createdAt, props.now)}</span>
      </div>
      <div className="stats">
        <Stat label="turns" value={state?.turn_count ?? 0} />
        <Stat label="messages" value={state?.message_count ?? 0} />
        <Stat label="Step executions" value={inspection.timeline.length + inspection.activeExecutions.filter((active) => !inspection.timeline.some((execution) => execution.executionId === active.executionId)).length} />
        <Stat label="failed attempts" value={failedAttempts} {...(failedAttempts > 0 ? { tone: "red" as const } : {})} />
        <Stat label="tokens" value={formatCount(inspection.snapshot.usage.total_tokens)} />
      </div>
      {state?.last_turn_error != null && (
        <div className="turn-error small">
          <strong>Last turn failed:</strong> {state.last_turn_error}
        </div>
      )}
    </div>
  );
}

function Deadline(props: { deadline: string | null | undefined; now: number }) {
  if (props.deadline == null) return <span className="muted">no deadline</span>;
  const left = Date.parse(props.deadline) - props.now;
  return <span className={left < 60_000 ? "error-text" : ""}>{left <= 0 ? "expired" : `${formatDuration(left)} left`}</span>;
}

export function InterruptsPanel(props: { interrupts: WireInterrupt[]; now: number }) {
  return (
    <Panel title="Pending interrupts" count={props.interrupts.length} testId="interrupts-panel">
      {props.interrupts.length === 0 ? (
        <div className="empty-panel">Nothing waits on a person.</div>
      ) : (
        <ul className="interrupts">
          {props.interrupts.map((interrupt) => (
            <li key={interrupt.interrupt_id} className="interrupt">
              <div className="interrupt-head">
                <Badge tone="amber" pulse>{interrupt.kind === "question" ? "question" : "approval"}</Badge>
                <strong className="mono">{interrupt.tool_name}</strong>
                <span className="spacer" />
                <span className="small"><Deadline deadline={interrupt.deadline} now={props.now} /></span>
              </div>
              {interrupt.question !== undefined && <p>{interrupt.question}</p>}
              <ValueView value={interrupt.arguments} emptyLabel="no arguments" />
              <div className="muted small">
                {interrupt.turn_id} · raised {formatRelative(interrupt.created_at, props.now)} · <span className="mono">{interrupt.interrupt_id}</span>
              </div>
            </li>
          ))}
        </ul>
      )}
    </Panel>
  );
}

const toolStatusTones: Record<string, Tone> = {
  succeeded: "green",
  failed: "red",
  rejected: "grey",
  outcome_unknown: "red",
  awaiting_approval: "amber",
  awaiting_answer: "amber",
  approved: "blue",
  waiting_for_timer: "indigo",
  waiting_for_task: "indigo",
};

export function ToolCallsPanel(props: { calls: WireToolCall[]; activeTurnId: string | null; history: { tool_name?: string; text: string; tool_call_id?: string; turn_id?: string | null }[] }) {
  return (
    <Panel title="Tool calls" count={props.calls.length} testId="tool-calls-panel" aside={<span className="muted small">{props.activeTurnId === null ? "no active turn" : `records of ${props.activeTurnId}`}</span>}>
      {props.calls.length === 0 ? (
        <div className="empty-panel">No tool call records: a turn keeps them while it runs, and its messages keep the results after.</div>
      ) : (
        <table className="tool-table">
          <thead>
            <tr>
              <th>tool</th>
              <th>effect</th>
              <th>status</th>
              <th>took</th>
            </tr>
          </thead>
          <tbody>
            {props.calls.map((call) => {
              const took = call.started_at !== undefined && call.finished_at !== undefined ? formatDuration(Date.parse(call.finished_at) - Date.parse(call.started_at)) : "–";
              return (
                <tr key={call.tool_call_id}>
                  <td>
                    <div className="mono">{call.tool_name}</div>
                    <div className="muted small" title={call.arguments}>{oneLine(call.arguments, 60)}</div>
                    {call.output != null && <div className="small" title={call.output}>→ {oneLine(call.output, 80)}</div>}
                    {call.error != null && <div className="small error-text" title={call.error}>{oneLine(call.error, 80)}</div>}
                  </td>
                  <td><span className={`effect effect-${call.effect}`}>{call.effect.replaceAll("_", " ")}</span>{call.requires_approval && <div className="muted small">needs approval</div>}</td>
                  <td><Badge tone={toolStatusTones[call.status] ?? "grey"}>{call.status.replaceAll("_", " ")}</Badge></td>
                  <td className="mono small">{took}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {props.history.length > 0 && (
        <details className="tool-history">
          <summary>{props.history.length} earlier tool results in the conversation</summary>
          <ul>
            {props.history.map((message, index) => (
              <li key={index}>
                <span className="mono">{message.tool_name ?? "tool"}</span> <span className="muted small">{message.turn_id ?? ""}</span>
                <div className="small" title={message.text}>{oneLine(message.text, 140)}</div>
              </li>
            ))}
          </ul>
        </details>
      )}
    </Panel>
  );
}

export function UsagePanel(props: { usage: WireUsage }) {
  const { usage } = props;
  const uncached = Math.max(0, usage.input_tokens - usage.cached_input_tokens);
  const total = Math.max(1, uncached + usage.cached_input_tokens + usage.output_tokens);
  const parts = [
    { key: "input", label: "input", value: uncached },
    { key: "cached", label: "cached input", value: usage.cached_input_tokens },
    { key: "output", label: "output", value: usage.output_tokens },
  ];
  return (
    <Panel title="Usage" testId="usage-panel" aside={<span className="muted small">{usage.requests} model {usage.requests === 1 ? "call" : "calls"}</span>}>
      <div className="usage-total"><strong>{formatCount(usage.total_tokens)}</strong> tokens</div>
      <div className="usage-bar" aria-hidden="true">
        {parts.map((part) => <span key={part.key} className={`usage-${part.key}`} style={{ width: `${(part.value / total) * 100}%` }} />)}
      </div>
      <dl className="usage-legend">
        {parts.map((part) => (
          <div key={part.key}>
            <dt><span className={`usage-swatch usage-${part.key}`} />{part.label}</dt>
            <dd>{formatCount(part.value)}</dd>
          </div>
        ))}
        <div>
          <dt><span className="usage-swatch usage-reasoning" />reasoning (in output)</dt>
          <dd>{formatCount(usage.reasoning_tokens)}</dd>
        </div>
      </dl>
    </Panel>
  );
}

const agentStatusText: Record<string, string> = {
  waiting_for_user_message: "waiting for a user message",
  running_model: "running the model",
  running_tools: "running tools",
  compacting_context: "compacting its context",
};

export function StatePanel(props: { inspection: SessionInspection }) {
  const { snapshot } = props.inspection;
  const state = snapshot.state;
  const rows: [string, ReactNode][] = state === null
    ? [["status", "not started"]]
    : [
        ["status", agentStatusText[state.status] ?? state.status],
        ["active turn", state.active_turn_id ?? <span className="muted">none</span>],
        ["turns", state.turn_count],
        ["messages", state.message_count],
        ["mode", state.interaction_mode],
        ["last turn error", state.last_turn_error ?? <span className="muted">none</span>],
        ["queued messages", snapshot.queued_message_count],
        ["steered messages", snapshot.steered_messages.length],
        ["plan", snapshot.plan === null ? <span className="muted">none</span> : "present"],
        ["context summary", snapshot.context_summary === null ? <span className="muted">none</span> : `through #${snapshot.context_summary.last_sequence}`],
        ["created", <span title={state.created_at}>{formatClock(state.created_at)}</span>],
        ["updated", <span title={state.updated_at}>{formatClock(state.updated_at)}</span>],
      ];
  return (
    <Panel title="Agent state" testId="state-panel" aside={<span className="muted small mono">{props.inspection.flowType}</span>}>
      <dl className="kv">
        {rows.map(([key, value]) => (
          <div key={key}>
            <dt>{key}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {snapshot.queued_messages.length > 0 && (
        <>
          <div className="subhead">Queued</div>
          <ul className="plain-list">
            {snapshot.queued_messages.map((message) => <li key={message.message_id}>{oneLine(message.text, 100)} <span className="muted small">{formatRelative(message.sent_at)}</span></li>)}
          </ul>
        </>
      )}
    </Panel>
  );
}
