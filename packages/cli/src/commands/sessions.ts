import type { AgentSessionFlow } from "@perdure/agents";
import type { Client } from "@perdure/engine";

/** One line per session of the hosted agents, newest first. */
export async function runSessionsCommand(client: Client, flows: ReadonlyMap<string, AgentSessionFlow>): Promise<string> {
  const rows: { id: string; agent: string; status: string; agentStatus: string; turns: number; updatedAt: string }[] = [];
  for (const [flowType, flow] of flows) {
    for (const entry of await client.listFlows({ flowType, limit: 1000 })) {
      const [state] = await client.getAttributes(entry.flowId, flow.agentState);
      rows.push({ id: entry.flowId, agent: flowType, status: entry.status, agentStatus: state?.status ?? "not started", turns: state?.turnCount ?? 0, updatedAt: entry.updatedAt.toISOString() });
    }
  }
  if (rows.length === 0) return "no sessions yet";
  rows.sort((left, right) => right.updatedAt.localeCompare(left.updatedAt));
  const widths = [Math.max(7, ...rows.map((row) => row.id.length)), Math.max(5, ...rows.map((row) => row.agent.length)), 9, 26, 6];
  const line = (cells: string[]): string => cells.map((cell, index) => cell.padEnd(widths[index] ?? 0)).join("  ").trimEnd();
  return [
    line(["session", "agent", "flow", "agent status", "turns", "updated"]),
    ...rows.map((row) => line([row.id, row.agent, row.status, row.agentStatus, String(row.turns), row.updatedAt])),
  ].join("\n");
}
