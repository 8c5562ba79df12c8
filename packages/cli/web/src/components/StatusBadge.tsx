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

/** What in a session waits for a person, or for time, beyond its agent status. */
export interface SessionAttention {
  /** Approvals pending. @default 0 */
  approvals?: number;
  /** Questions pending. @default 0 */
  questions?: number;
  /** When the earliest durable wait ends (ISO 8601), while one runs. @default none */
  waitUntil?: string | null;
}

/** "14:05", or "Thu 10:00" when it is not today. */
function formatWaitTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const today = new Date().toDateString() === date.toDateString();
  return date.toLocaleString(undefined, today ? { hour: "2-digit", minute: "2-digit" } : { weekday: "short", hour: "2-digit", minute: "2-digit" });
}

/** How a session reads at a glance: the Flow status, refined by what the agent does and what waits on a person. */
export function describeSessionStatus(flowStatus: string, agentStatus: string | null, attention: SessionAttention = {}): { label: string; tone: Tone; pulse: boolean } {
  if (flowStatus === "failed") return { label: "failed", tone: "red", pulse: false };
  if (flowStatus === "stopped") return { label: "stopped", tone: "grey", pulse: false };
  if (flowStatus === "completed") return { label: "completed", tone: "grey", pulse: false };
  if ((attention.approvals ?? 0) > 0) return { label: "needs approval", tone: "amber", pulse: true };
  if ((attention.questions ?? 0) > 0) return { label: "needs an answer", tone: "indigo", pulse: true };
  if (attention.waitUntil !== undefined && attention.waitUntil !== null && agentStatus === "running_tools") {
    return { label: `waiting until ${formatWaitTime(attention.waitUntil)}`, tone: "amber", pulse: false };
  }
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

export function SessionStatusBadge(props: { flowStatus: string; agentStatus: string | null; attention?: SessionAttention | undefined }) {
  const { label, tone, pulse } = describeSessionStatus(props.flowStatus, props.agentStatus, props.attention);
  return <Badge tone={tone} pulse={pulse} title={`Flow ${props.flowStatus}, agent ${props.agentStatus ?? "not started"}`}>{label}</Badge>;
}
