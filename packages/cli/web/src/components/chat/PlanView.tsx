// The session's plan, above the composer: its tasks with their statuses, its
// revision, and, while it is a draft waiting for approval (or an active plan
// the session is idle on), a button that approves that revision with
// `execute_plan`. The session then starts a turn that carries it out and
// keeps the statuses current with `write_todos`.
import { useState } from "react";
import { announce, moveFocusAfterAction } from "../../lib/a11y.tsx";
import type { PlanPartData, PlanTaskStatus, WirePlan } from "../../lib/agent-parts.ts";
import { CheckIcon, ListIcon } from "../Icons.tsx";
import { Badge, type Tone } from "../StatusBadge.tsx";

const statusTones: Record<string, { label: string; tone: Tone }> = {
  draft: { label: "draft · needs approval", tone: "amber" },
  active: { label: "active", tone: "blue" },
  completed: { label: "completed", tone: "green" },
  cleared: { label: "cleared", tone: "grey" },
};

function TaskMark(props: { status: PlanTaskStatus }) {
  if (props.status === "completed") return <span className="task-mark task-done" role="img" aria-label="completed"><CheckIcon /></span>;
  if (props.status === "in_progress") return <span className="task-mark task-running" role="img" aria-label="in progress" />;
  return <span className="task-mark task-pending" role="img" aria-label="pending" />;
}

export interface PlanViewProps {
  plan: WirePlan | null;
  /** The session waits for a message, with nothing pending: a plan can be executed now. */
  idle: boolean;
  /** Approves `revision`; resolves to whether the session took it. */
  onExecute: (revision: number) => Promise<boolean>;
}

export function PlanView(props: PlanViewProps) {
  const { plan } = props;
  const [open, setOpen] = useState(true);
  const [executing, setExecuting] = useState<number | null>(null);
  const [refusal, setRefusal] = useState<{ revision: number; text: string } | null>(null);
  if (plan === null || plan.status === "cleared") return null;
  const done = plan.tasks.filter((task) => task.status === "completed").length;
  const status = statusTones[plan.status] ?? { label: plan.status, tone: "grey" as const };
  const canExecute = props.idle && (plan.status === "draft" || plan.status === "active") && executing !== plan.revision;
  const execute = async (): Promise<void> => {
    // The button goes once the plan runs: the focus moves on before it does.
    moveFocusAfterAction();
    setExecuting(plan.revision);
    setRefusal(null);
    try {
      const executed = await props.onExecute(plan.revision);
      if (executed) announce(`Approved plan revision ${plan.revision}; the agent carries it out.`);
      else setRefusal({ revision: plan.revision, text: "The session did not take it: the plan changed, or the session is busy. Try again when it is idle." });
    } catch (error) {
      setRefusal({ revision: plan.revision, text: error instanceof Error ? error.message : String(error) });
    } finally {
      setExecuting(null);
    }
  };

  return (
    <section className={`plan plan-${plan.status}`} data-testid="plan-view" data-revision={plan.revision} data-status={plan.status} aria-label="Plan">
      <div className="plan-head">
        <button type="button" className="plan-toggle" onClick={() => setOpen(!open)} aria-expanded={open}>
          <span className="chevron" aria-hidden="true">{open ? "▾" : "▸"}</span>
          <span className="plan-title">Plan</span>
          <span className="muted small">revision {plan.revision} · {done} of {plan.tasks.length} done</span>
        </button>
        <span className="spacer" />
        <Badge tone={status.tone} pulse={plan.status === "draft"}>{status.label}</Badge>
        {(plan.status === "draft" || (plan.status === "active" && props.idle)) && (
          <button type="button" className={`button small ${plan.status === "draft" ? "button-approve" : ""}`} disabled={!canExecute} onClick={() => void execute()}
            title={props.idle ? `Approve revision ${plan.revision} and start a turn that carries it out` : "The session is busy; execute once it is idle"}>
            {executing === plan.revision ? "Starting…" : plan.status === "draft" ? "Approve and execute" : "Continue executing"}
          </button>
        )}
      </div>
      {open && (
        <ol className="plan-tasks">
          {plan.tasks.map((task, index) => (
            <li key={index} className={`plan-task plan-task-${task.status}`} data-status={task.status}>
              <TaskMark status={task.status} />
              <span className="plan-task-text">{task.content}</span>
            </li>
          ))}
        </ol>
      )}
      {refusal !== null && refusal.revision === plan.revision && <div className="inline-error" role="alert">{refusal.text}</div>}
    </section>
  );
}

/** A plan update inside the turn that made it. */
export function PlanUpdateNote(props: { plan: PlanPartData }) {
  const status = statusTones[props.plan.status]?.label ?? props.plan.status;
  return (
    <div className="plan-note" data-testid="plan-update" data-revision={props.plan.revision}>
      <span className="plan-note-mark"><ListIcon /></span>
      {props.plan.taskCount === 0 ? "Cleared the plan" : `Plan revision ${props.plan.revision}: ${props.plan.taskCount} ${props.plan.taskCount === 1 ? "task" : "tasks"}`}
      <span className="muted"> · {status}</span>
    </div>
  );
}
