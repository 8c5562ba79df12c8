// A tool call in the conversation: what the agent called, with which
// arguments, and what came back. Calls that need a person show Approve and
// Reject.
import type { DynamicToolUIPart } from "ai";
import { useLayoutEffect, useRef, useState } from "react";
import { announce, moveFocusAfterAction } from "../../lib/a11y.tsx";
import { describeMcpToolProgress, type McpToolProgressData, type ToolTaskData } from "../../lib/agent-parts.ts";
import type { WireToolCall } from "../../lib/api.ts";
import { formatDuration } from "../../lib/format.ts";
import { ShieldIcon, ToolIcon } from "../Icons.tsx";
import { Badge, type Tone } from "../StatusBadge.tsx";
import { ValueView } from "../ValueView.tsx";

export interface ToolCallCardProps {
  part: DynamicToolUIPart;
  /** The stored record of this call while its turn is active, for its effect and timing. */
  record: WireToolCall | undefined;
  /** The remote task the call started, with its latest status, if it started one. */
  task?: ToolTaskData | undefined;
  /** The latest progress its MCP server reported, while the stream carries it. */
  progress?: McpToolProgressData | undefined;
  onApprovalResponse: (approvalId: string, approved: boolean, reason?: string) => void;
  disabled: boolean;
}

function describeState(part: DynamicToolUIPart): { label: string; tone: Tone; pulse: boolean } {
  switch (part.state) {
    case "input-streaming":
      return { label: "preparing", tone: "blue", pulse: true };
    case "input-available":
      return { label: "running", tone: "blue", pulse: true };
    case "approval-requested":
      return { label: "needs approval", tone: "amber", pulse: true };
    case "approval-responded":
      return part.approval.approved ? { label: "approved · running", tone: "blue", pulse: true } : { label: "rejected", tone: "grey", pulse: false };
    case "output-available":
      return { label: "done", tone: "green", pulse: false };
    case "output-error":
      return { label: "failed", tone: "red", pulse: false };
    case "output-denied":
      return { label: "rejected", tone: "grey", pulse: false };
    default:
      return { label: "unknown", tone: "grey", pulse: false };
  }
}

const effectLabels: Record<string, string> = {
  read: "read",
  idempotent_write: "idempotent write",
  non_idempotent_write: "write · runs once",
  unclassified: "unclassified",
};

const taskStatusLabels: Record<string, string> = {
  running: "running remotely",
  awaiting_answer: "waiting for your answer",
  succeeded: "finished",
  failed: "failed",
  rejected: "rejected",
  outcome_unknown: "abandoned · outcome unknown",
};

/** A tool task's line: its handle, its latest status and how often the session polls it. */
function TaskStatus(props: { task: ToolTaskData; record: WireToolCall | undefined }) {
  const { task, record } = props;
  const interval = task.pollIntervalSeconds ?? record?.task_poll_interval_seconds ?? null;
  const reason = task.cancellationReason ?? record?.cancellation_reason ?? null;
  return (
    <div className="tool-section" data-testid="tool-task" data-status={task.status}>
      <div className="tool-section-label">Task</div>
      <div>
        <code>{task.taskId}</code> · {taskStatusLabels[task.status] ?? task.status}
        {task.status === "running" && interval !== null && <span className="muted"> · polled every {interval} s</span>}
        {reason === "turn_cancelled" && <span className="muted"> · the turn was stopped, so the session stopped following it</span>}
      </div>
    </div>
  );
}

export function ToolCallCard(props: ToolCallCardProps) {
  const { part, record, task, progress } = props;
  const state = task !== undefined && task.status === "running" && part.state === "input-available"
    ? { label: "task running", tone: "blue" as Tone, pulse: true }
    : describeState(part);
  // Open while it runs or asks; a finished call folds away unless it was approved (its result matters) or the reader opened it.
  const [userOpen, setUserOpen] = useState<boolean | null>(null);
  const open = userOpen ?? (part.state !== "output-available" || part.approval !== undefined);
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState("");
  /** Back to "Reject…" when the reason field closes without a decision. */
  const rejectButton = useRef<HTMLButtonElement>(null);
  const [returnFocus, setReturnFocus] = useState(false);
  // Before the next frame is drawn, so the focus is never seen on <body>.
  useLayoutEffect(() => {
    if (returnFocus && !rejecting) {
      rejectButton.current?.focus();
      setReturnFocus(false);
    }
  }, [returnFocus, rejecting]);
  const closeReason = (): void => {
    setRejecting(false);
    setReturnFocus(true);
  };
  const decide = (approved: boolean, why?: string): void => {
    if (part.state === "approval-requested") props.onApprovalResponse(part.approval.id, approved, why);
    announce(approved ? `Approved ${part.toolName}.` : `Rejected ${part.toolName}.`);
    moveFocusAfterAction();
  };
  const needsApproval = part.state === "approval-requested";
  const expanded = open || needsApproval || rejecting;
  const duration = record?.started_at !== undefined && record.finished_at !== undefined ? Date.parse(record.finished_at) - Date.parse(record.started_at) : undefined;

  return (
    <div className={`tool-card tool-${part.state}`} data-testid="tool-card" data-tool-name={part.toolName}>
      <button type="button" className="tool-card-head" onClick={() => setUserOpen(!open)} aria-expanded={expanded}>
        <span className="tool-icon">{needsApproval ? <ShieldIcon /> : <ToolIcon />}</span>
        <span className="tool-name">{part.toolName}</span>
        {record !== undefined && <span className={`effect effect-${record.effect}`}>{effectLabels[record.effect] ?? record.effect}</span>}
        <span className="spacer" />
        {duration !== undefined && Number.isFinite(duration) && <span className="muted small">{formatDuration(duration)}</span>}
        <Badge tone={state.tone} pulse={state.pulse}>{state.label}</Badge>
        <span className="chevron" aria-hidden="true">{expanded ? "▾" : "▸"}</span>
      </button>
      {expanded && (
        <div className="tool-card-body">
          {needsApproval && (
            <p className="approval-question" id={`approval-${part.toolCallId}`}>
              The agent wants to run <strong>{part.toolName}</strong> with these arguments. It waits, durably, until you decide.
            </p>
          )}
          <div className="tool-section">
            <div className="tool-section-label">Arguments</div>
            <ValueView value={part.input} emptyLabel="no arguments" />
          </div>
          {task !== undefined && <TaskStatus task={task} record={record} />}
          {progress !== undefined && (part.state === "input-available" || (part.state === "approval-responded" && part.approval.approved)) && (
            <div className="tool-section" data-testid="tool-progress">
              <div className="tool-section-label">Progress</div>
              <div>{describeMcpToolProgress(progress)}</div>
            </div>
          )}
          {part.state === "output-available" && (
            <div className="tool-section">
              <div className="tool-section-label">Result</div>
              <ValueView value={part.output} emptyLabel="no output" />
            </div>
          )}
          {part.state === "output-error" && (
            <div className="tool-section">
              <div className="tool-section-label">Error</div>
              <div className="error-text">{part.errorText}</div>
            </div>
          )}
          {(part.state === "output-denied" || (part.state === "approval-responded" && !part.approval.approved)) && (
            <div className="tool-section">
              <div className="tool-section-label">Rejected</div>
              {/* A call the session rejected without an approval (a declined question, a steered turn) has no approval on its part. */}
              <div className="muted">{(part.approval as { reason?: string } | undefined)?.reason ?? "Rejected without a reason."}</div>
            </div>
          )}
          {needsApproval && !rejecting && (
            <div className="approval-actions">
              <button type="button" className="button button-approve" data-focus-next aria-describedby={`approval-${part.toolCallId}`} disabled={props.disabled} onClick={() => decide(true)}>
                Approve
              </button>
              <button type="button" ref={rejectButton} className="button button-reject" disabled={props.disabled} onClick={() => setRejecting(true)}>
                Reject…
              </button>
            </div>
          )}
          {needsApproval && rejecting && (
            <form
              className="approval-actions"
              onSubmit={(event) => {
                event.preventDefault();
                decide(false, reason.trim() === "" ? undefined : reason.trim());
              }}
              onKeyDown={(event) => {
                if (event.key === "Escape") {
                  event.preventDefault();
                  closeReason();
                }
              }}
            >
              <input className="reject-reason" autoFocus aria-label="Reason for the agent (optional)" placeholder="Reason for the agent (optional)" value={reason} onChange={(event) => setReason(event.target.value)} />
              <button type="submit" className="button button-reject" disabled={props.disabled}>Reject</button>
              <button type="button" className="button button-ghost" onClick={closeReason}>Cancel</button>
            </form>
          )}
        </div>
      )}
    </div>
  );
}
