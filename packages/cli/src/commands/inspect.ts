import type { AgentSessionFlow } from "@perdure/agents";
import { FlowNotFoundError, type Client } from "@perdure/engine";
import { truncateText } from "../format/truncate-text.ts";
import { inspectSession, type SessionInspection } from "@perdure/agents/http";

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

/** The session's Step timeline and state as terminal text. */
export function formatInspection(inspection: SessionInspection): string {
  const lines: string[] = [];
  const state = inspection.snapshot.state as { status?: string; turn_count?: number; active_turn_id?: string | null; last_turn_error?: string | null } | null;
  lines.push(`${inspection.flowId}  ${inspection.flowType}  flow ${inspection.status}  agent ${state?.status ?? "not started"}  turns ${state?.turn_count ?? 0}`);
  if (state?.last_turn_error) lines.push(`last turn error: ${state.last_turn_error}`);
  if (inspection.lineage !== null) {
    const { sourceSessionId, throughTurn, inheritedMessageCount } = inspection.lineage;
    lines.push(`forked from ${sourceSessionId} ${throughTurn === 0 ? "before its first turn" : `after turn ${throughTurn}`} (${inheritedMessageCount} messages inherited)`);
  }
  const forks = inspection.forks;
  if (forks !== undefined && forks.sessions.length > 0) {
    const listed = forks.sessions.map((fork) => `${fork.sessionId} (${fork.throughTurn === 0 ? "before turn 1" : `after turn ${fork.throughTurn}`})`).join(", ");
    lines.push(`forks: ${listed}${forks.complete ? "" : ` (among the first ${forks.scanned} sessions only)`}`);
  }
  lines.push("");
  lines.push(`${pad("execution", 10)}${pad("Step", 26)}${pad("status", 11)}attempts`);
  for (const execution of inspection.timeline) {
    const attempts = execution.attempts.map((attempt) => {
      const mark = attempt.status === "completed" ? "ok" : attempt.status;
      return `${attempt.method}#${attempt.attempt} ${mark} ${attempt.durationMs}ms${attempt.error === null ? "" : ` (${truncateText(attempt.error, 80)})`}`;
    });
    lines.push(`${pad(execution.executionId, 10)}${pad(execution.stepType, 26)}${pad(execution.status, 11)}${attempts.join(", ")}`);
  }
  const pending = (inspection.snapshot.pending_interrupts as { interrupt_id: string; tool_name: string }[] | undefined) ?? [];
  if (pending.length > 0) {
    lines.push("");
    lines.push(`pending interrupts: ${pending.map((interrupt) => `${interrupt.interrupt_id} (${interrupt.tool_name})`).join(", ")}`);
  }
  const usage = inspection.snapshot.usage as { total_tokens?: number; requests?: number } | undefined;
  lines.push("");
  lines.push(`messages ${(inspection.snapshot.messages as unknown[]).length}  usage ${usage?.total_tokens ?? 0} tokens in ${usage?.requests ?? 0} model calls`);
  return lines.join("\n");
}

/** `perdure inspect`: the session's timeline; `storeDescription` names the store in "no session" errors. */
export async function runInspectCommand(client: Client, flows: ReadonlyMap<string, AgentSessionFlow>, flowId: string, storeDescription: string): Promise<string> {
  let description;
  try {
    description = await client.describe(flowId);
  } catch (error) {
    if (FlowNotFoundError.isInstance(error)) throw new Error(`no session ${JSON.stringify(flowId)} in ${storeDescription}; perdure sessions lists them`, { cause: error });
    throw error;
  }
  const flow = flows.get(description.flowType);
  if (flow === undefined) throw new Error(`session ${flowId} is a ${description.flowType}, which the entry module does not export`);
  return formatInspection(await inspectSession(client, flow, flowId));
}
