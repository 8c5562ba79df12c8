// Status pills for Flows, agents and tool calls, in one palette.
import type { ReactNode } from "react";

export type Tone = "green" | "blue" | "violet" | "amber" | "red" | "grey" | "indigo";

export function Badge(props: { tone: Tone; children: ReactNode; pulse?: boolean; title?: string }) {
  return (
    <span className={`badge badge-${props.tone}${props.pulse === true ? " badge-pulse" : ""}`} title={props.title}>
      <span className="badge-dot" />
      {props.children}
    </span>
  );
}

/** How a session reads at a glance: the Flow status, refined by what the agent does. */
export function describeSessionStatus(flowStatus: string, agentStatus: string | null, pendingApprovals = 0): { label: string; tone: Tone; pulse: boolean } {
  if (flowStatus === "failed") return { label: "failed", tone: "red", pulse: false };
  if (flowStatus === "stopped") return { label: "stopped", tone: "grey", pulse: false };
  if (flowStatus === "completed") return { label: "completed", tone: "grey", pulse: false };
  if (pendingApprovals > 0) return { label: "needs approval", tone: "amber", pulse: true };
  switch (agentStatus) {
    case null:
      return { label: "starting", tone: "blue", pulse: true };
    case "waiting_for_user_message":
      return { label: "idle", tone: "green", pulse: false };
    case "running_model":
      return { label: "thinking", tone: "violet", pulse: true };
    case "running_tools":
      return { label: "running tools", tone: "blue", pulse: true };
    case "compacting_context":
      return { label: "compacting", tone: "indigo", pulse: true };
    default:
      return { label: agentStatus, tone: "blue", pulse: false };
  }
}

export function SessionStatusBadge(props: { flowStatus: string; agentStatus: string | null; pendingApprovals?: number }) {
  const { label, tone, pulse } = describeSessionStatus(props.flowStatus, props.agentStatus, props.pendingApprovals);
  return <Badge tone={tone} pulse={pulse} title={`Flow ${props.flowStatus}, agent ${props.agentStatus ?? "not started"}`}>{label}</Badge>;
}
