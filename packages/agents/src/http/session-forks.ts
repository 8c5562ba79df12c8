/**
 * The forks of a session, for the inspector. A fork records its source
 * (`SessionLineage`) and never writes to it, so no index of forks by source
 * exists: this reads the lineage of the sessions of the same agent, up to
 * `inspectedForkScanLimit` of them, and says whether it saw them all.
 */
import type { Client } from "@perdure/engine";
import { inspectedForkScanLimit, type InspectedFork, type InspectedForks } from "../contract/ui-stream/session-inspection.ts";
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";

const pageSize = 100;

/** The sessions forked from `sourceSessionId` (created at `sourceCreatedAt`), oldest fork first. */
export async function findSessionForks(client: Client, flow: AgentSessionFlow, sourceSessionId: string, sourceCreatedAt: Date, scanLimit = inspectedForkScanLimit): Promise<InspectedForks> {
  const found: InspectedFork[] = [];
  let scanned = 0;
  let afterFlowId: string | undefined;
  for (;;) {
    const limit = Math.min(pageSize, scanLimit - scanned);
    if (limit <= 0) return { sessions: sorted(found), scanned, complete: false };
    const page = await client.listFlows({ flowType: flow.flowType, limit, ...(afterFlowId === undefined ? {} : { afterFlowId }) });
    // A fork is created after its source; older sessions need no read.
    const candidates = page.filter((row) => row.flowId !== sourceSessionId && row.createdAt.getTime() >= sourceCreatedAt.getTime());
    const lineages = await Promise.all(candidates.map(async (row) => [row.flowId, (await client.getAttributes(row.flowId, flow.sessionLineage))[0]] as const));
    for (const [sessionId, lineage] of lineages) {
      if (lineage?.sourceSessionId === sourceSessionId) found.push({ sessionId, throughTurn: lineage.throughTurn, forkedAt: lineage.forkedAt });
    }
    scanned += page.length;
    if (page.length < limit) return { sessions: sorted(found), scanned, complete: true };
    afterFlowId = page.at(-1)?.flowId;
  }
}

function sorted(forks: InspectedFork[]): InspectedFork[] {
  return forks.sort((left, right) => left.forkedAt.localeCompare(right.forkedAt) || left.sessionId.localeCompare(right.sessionId));
}
