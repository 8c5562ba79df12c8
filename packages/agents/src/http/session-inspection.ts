/**
 * Everything the session inspector shows, read in a few consistent calls:
 * Flow status, the Step timeline, the session snapshot without what only the
 * session's Steps use, the agent's features and where its messages are.
 */
import type { AgentSnapshotWire, SessionInspection, TimelineExecution } from "../contract/ui-stream/session-inspection.ts";
import { agentSnapshotToWire } from "../contract/values/agent-snapshot.ts";
import { describeAgentSessionFeatures, type AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import type { Client, StepHistoryEntry } from "@perdure/engine";
import { describeMessageStorage } from "./message-storage-view.ts";
import { findSessionForks } from "./session-forks.ts";

export type { SessionInspection, TimelineExecution } from "../contract/ui-stream/session-inspection.ts";

/** Groups Step history entries by execution, in the order executions started. */
export function buildTimeline(history: readonly StepHistoryEntry[], active: ReadonlySet<string>): TimelineExecution[] {
  const byExecution = new Map<string, TimelineExecution>();
  for (const entry of history) {
    let execution = byExecution.get(entry.executionId);
    if (execution === undefined) {
      execution = { executionId: entry.executionId, stepType: entry.stepType, startedAt: entry.startedAt.toISOString(), finishedAt: entry.finishedAt.toISOString(), status: "completed", attempts: [] };
      byExecution.set(entry.executionId, execution);
    }
    execution.attempts.push({
      method: entry.method,
      attempt: entry.attempt,
      status: entry.status,
      startedAt: entry.startedAt.toISOString(),
      finishedAt: entry.finishedAt.toISOString(),
      durationMs: Math.max(0, entry.finishedAt.getTime() - entry.startedAt.getTime()),
      error: entry.error,
      outcome: entry.outcome,
    });
    execution.finishedAt = entry.finishedAt.toISOString();
    if (entry.startedAt.toISOString() < execution.startedAt) execution.startedAt = entry.startedAt.toISOString();
  }
  for (const execution of byExecution.values()) {
    const last = execution.attempts.at(-1);
    const completed = execution.attempts.some((attempt) => attempt.method === "execute" && attempt.status === "completed");
    execution.status = active.has(execution.executionId) ? "active" : completed ? "completed" : last?.status === "cancelled" ? "cancelled" : last?.status === "failed" ? "failed" : "completed";
  }
  return [...byExecution.values()].sort((left, right) => Number(left.executionId) - Number(right.executionId));
}

/**
 * The snapshot as wire JSON without what only the session's Steps use:
 * `framework_item` can hold the agent's instructions, and a tool source's
 * reference is internal.
 */
export function browserSafeSnapshot(snapshot: Record<string, unknown>): Record<string, unknown> {
  const messages = (snapshot.messages as Record<string, unknown>[]).map(({ framework_item: _frameworkItem, ...rest }) => rest);
  const toolCalls = (snapshot.tool_calls as Record<string, unknown>[]).map(({ tool_source_reference: _reference, ...rest }) => rest);
  const queued = ((snapshot.queued_messages ?? []) as WireWaitingMessage[]).map(previewOfWaitingMessage);
  const steered = ((snapshot.steered_messages ?? []) as WireWaitingMessage[]).map(previewOfWaitingMessage);
  return { ...snapshot, messages, tool_calls: toolCalls, queued_messages: queued, steered_messages: steered };
}

/** A queued or steered message as the snapshot's wire JSON has it. */
interface WireWaitingMessage {
  message_id: string;
  text: string;
  [field: string]: unknown;
}

/** How many characters of a waiting message's text the inspection carries. */
export const waitingMessagePreviewLength = 200;

/**
 * A waiting message with its text cut to a preview: a page polls the
 * inspection every few seconds, and a full queue would send megabytes each
 * time. `text_bytes` is the whole text's size.
 */
function previewOfWaitingMessage(message: WireWaitingMessage): WireWaitingMessage {
  const text = message.text.length <= waitingMessagePreviewLength ? message.text : `${message.text.slice(0, waitingMessagePreviewLength - 1)}…`;
  return { ...message, text, text_bytes: Buffer.byteLength(message.text) };
}

/** Reads a session for the inspector: Flow status, Step timeline and the session snapshot as wire JSON. */
export async function inspectSession(client: Client, flow: AgentSessionFlow, flowId: string, servedFlows: readonly AgentSessionFlow[] = [flow]): Promise<SessionInspection> {
  const [description, history, snapshot, [index, lineage, parentSession]] = await Promise.all([
    client.describe(flowId),
    client.getStepHistory(flowId, { limit: 1000 }),
    client.invokeRPC(flow.getAgentSnapshot, flowId),
    client.getAttributes(flowId, flow.agentMessageIndex, flow.sessionLineage, flow.parentSession),
  ]);
  const forks = await findSessionForks(client, flow, flowId, description.createdAt);
  const active = new Set(description.executions.map((execution) => execution.executionId));
  return {
    flowId,
    flowType: description.flowType,
    status: description.status,
    createdAt: description.createdAt.toISOString(),
    updatedAt: description.updatedAt.toISOString(),
    activeExecutions: description.executions,
    timeline: buildTimeline(history, active),
    // agentSnapshotToWire writes the fields AgentSnapshotWire declares (contract/values/agent-snapshot.ts).
    snapshot: browserSafeSnapshot(agentSnapshotToWire(snapshot)) as unknown as AgentSnapshotWire,
    features: describeAgentSessionFeatures(flow),
    messageStorage: describeMessageStorage(index, snapshot.state?.messageCount ?? 0),
    lineage: lineage ?? null,
    forks,
    parentSession: parentSession ?? null,
    childSessions: await findChildSessions(client, servedFlows, flowId),
  };
}

/** How many sub-agent sessions the inspector lists. */
const maxListedChildSessions = 100;

/**
 * The sub-agent sessions `agentTool` started for `flowId`: their IDs start
 * with `<flowId>.` (`childSessionId`), so each served agent's sessions are
 * read from that prefix on, and each candidate's `ParentSession` confirms it.
 */
async function findChildSessions(client: Client, servedFlows: readonly AgentSessionFlow[], flowId: string): Promise<{ sessionId: string; agent: string }[]> {
  const prefix = `${flowId}.`;
  const children: { sessionId: string; agent: string }[] = [];
  for (const served of servedFlows) {
    const rows = await client.listFlows({ flowType: served.flowType, afterFlowId: prefix, limit: maxListedChildSessions });
    for (const row of rows) {
      if (!row.flowId.startsWith(prefix)) continue;
      const [link] = await client.getAttributes(row.flowId, served.parentSession);
      if (link?.sessionId === flowId) children.push({ sessionId: row.flowId, agent: served.flowType });
    }
  }
  return children.slice(0, maxListedChildSessions);
}
