/**
 * The boundary-kill loop's own invariant: no acknowledged commit is lost.
 * Every `worker.commit.after-commit` a process reached is a commit the store
 * reported durable; its Step history entry must be there after the kill.
 */
import type { DurableBoundaryTraceEntry } from "../internal/durable-boundary.ts";
import type { BoundaryKillHistoryEntry } from "./boundary-kill-scenario.ts";

/** The boundary that acknowledges a Step method's commit. */
export const acknowledgedCommitBoundary = "worker.commit.after-commit";

/**
 * Matches each acknowledged commit of `reached` to its own Step history
 * entry: same Flow, same Step type, finished no later than the boundary was
 * reached (entries a replacement recorded later cannot stand in for it).
 * Returns one message per commit without an entry; empty when none was lost.
 *
 * @example
 * const lost = await findLostAcknowledgedCommits(readBoundaryTrace(tracePath), (flowId) => client.getStepHistory(flowId));
 * assert.deepEqual(lost, []);
 */
export async function findLostAcknowledgedCommits(
  reached: readonly DurableBoundaryTraceEntry[],
  readStepHistory: (flowId: string) => Promise<readonly BoundaryKillHistoryEntry[]>,
): Promise<string[]> {
  const acknowledged = reached.filter((entry) => entry.name === acknowledgedCommitBoundary);
  const lost: string[] = [];
  for (const flowId of new Set(acknowledged.map((entry) => entry.flowId))) {
    let history: BoundaryKillHistoryEntry[];
    try {
      history = [...(await readStepHistory(flowId))].sort((left, right) => left.finishedAt.getTime() - right.finishedAt.getTime());
    } catch (error) {
      lost.push(`acknowledged commits of ${flowId} cannot be checked: reading its Step history failed: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    // Both lists ascend in time, so taking the earliest entry that fits never starves a later commit.
    for (const commit of acknowledged.filter((entry) => entry.flowId === flowId)) {
      const index = history.findIndex((entry) => entry.stepType === commit.detail && entry.finishedAt.getTime() <= commit.at);
      if (index === -1) {
        lost.push(
          `acknowledged commit lost: boundary ${commit.boundary} (${acknowledgedCommitBoundary} of ${flowId} ${String(commit.detail)}, process ${commit.processId}) `
            + `has no Step history entry of ${String(commit.detail)} that finished by then`,
        );
        continue;
      }
      history.splice(index, 1);
    }
  }
  return lost;
}
