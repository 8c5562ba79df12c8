import assert from "node:assert/strict";
import { test } from "node:test";
import type { DurableBoundaryName, DurableBoundaryTraceEntry } from "../internal/durable-boundary.ts";
import { findLostAcknowledgedCommits } from "./boundary-kill-acknowledged-commits.ts";
import type { BoundaryKillHistoryEntry } from "./boundary-kill-scenario.ts";

function reached(boundary: number, name: DurableBoundaryName, detail: string, at: number, flowId = "order-1"): DurableBoundaryTraceEntry {
  return { boundary, name, flowId, detail, processId: 4242, at };
}

function recorded(stepType: string, finishedAt: number, status = "completed"): BoundaryKillHistoryEntry {
  return { stepType, status, finishedAt: new Date(finishedAt) };
}

const trace = [
  reached(1, "worker.claim.before-commit", "Reserve", 100),
  reached(2, "worker.commit.after-commit", "Reserve", 110),
  reached(3, "worker.commit.before-commit", "Charge", 120),
  reached(4, "worker.commit.after-commit", "Charge", 130, "order-2"),
  reached(5, "worker.commit.after-commit", "Reserve", 140),
];

void test("every acknowledged commit with its own history entry, finished by then, is kept", async () => {
  const histories: Record<string, BoundaryKillHistoryEntry[]> = {
    "order-1": [recorded("Reserve", 105), recorded("Reserve", 139, "failed"), recorded("Charge", 900)],
    "order-2": [recorded("Charge", 130)],
  };
  assert.deepEqual(await findLostAcknowledgedCommits(trace, async (flowId) => histories[flowId] ?? []), []);
});

void test("a commit whose only matching entry was recorded after the kill is reported lost, naming its boundary", async () => {
  // The second Reserve commit (boundary 5) has no entry of its own: the one at 900 came from a replacement.
  const histories: Record<string, BoundaryKillHistoryEntry[]> = {
    "order-1": [recorded("Reserve", 105), recorded("Reserve", 900)],
    "order-2": [recorded("Charge", 125)],
  };
  const lost = await findLostAcknowledgedCommits(trace, async (flowId) => histories[flowId] ?? []);
  assert.equal(lost.length, 1);
  assert.match(lost[0] ?? "", /^acknowledged commit lost: boundary 5 \(worker\.commit\.after-commit of order-1 Reserve, process 4242\)/);
});

void test("one history entry cannot stand for two commits, and another Step type's entry stands for none", async () => {
  const lost = await findLostAcknowledgedCommits(trace, async (flowId) => (flowId === "order-1" ? [recorded("Reserve", 105), recorded("Charge", 106)] : []));
  assert.deepEqual(lost.map((message) => /boundary (\d+)/.exec(message)?.[1]), ["5", "4"]);
});

void test("a Step history that cannot be read is reported, not taken as empty", async () => {
  const lost = await findLostAcknowledgedCommits(trace.slice(0, 2), async () => {
    throw new Error("no Flow has ID \"order-1\"");
  });
  assert.deepEqual(lost, ["acknowledged commits of order-1 cannot be checked: reading its Step history failed: no Flow has ID \"order-1\""]);
});
