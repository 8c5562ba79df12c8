/**
 * The boundary-kill loop over one session turn: a read tool, an approved
 * single-attempt write and a failing tool. Real Worker child processes on a
 * private SQLite engine are SIGKILLed at each durable boundary in turn
 * (claims, commits, the model's response and each tool's side effect before
 * their records, the approval's RPC commit), replaced, and checked. Tool
 * runs are counted in an InvocationLog outside the store.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client, type Store } from "@perdure/engine";
import { boundaryKillSample, formatBoundaryKillReport, runBoundaryKillLoop, type BoundaryKillRunResult, type BoundaryKillScenario } from "@perdure/engine/testing";
import { failedToolResult, outcomeUnknownToolResult } from "../contract/values/result-texts.ts";
import type { ToolEffect } from "../contract/values/tool-effect.ts";
import { assertAgentSessionInvariants } from "./agent-session-invariants.ts";
import type { InvocationLog } from "./invocation-log.ts";
import { KillableWorkerProcess } from "./killable-worker-process.ts";
import { PrivateEngine } from "./private-engine.ts";
import {
  boundaryKillSessionDirectoryEnvironmentVariable,
  boundaryKillSessionFlow,
  boundaryKillSessionId,
  boundaryKillSessionLog,
  boundaryKillSessionMessage,
  boundaryKillSessionRefundEffectEnvironmentVariable,
  boundaryKillSessionToolRequestText,
  warehouseOfflineError,
  type SessionToolRunDetails,
} from "./test-fixtures/boundary-kill-session-flow.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/boundary-kill-session-worker-main.ts", import.meta.url));
const flow = boundaryKillSessionFlow;
const sessionId = boundaryKillSessionId;

interface SessionRun {
  engine: PrivateEngine;
  store: Store;
  client: Client;
  log: InvocationLog;
}

function completedExecutes(history: readonly { stepType: string; method: string; status: string }[], stepType: string): number {
  return history.filter((entry) => entry.stepType === stepType && entry.method === "execute" && entry.status === "completed").length;
}

/** The boundaries each run's first process passed, by the boundary it was armed to die at. */
const pathsTaken = new Map<number, string[]>();

/** What must hold after every run of the turn, kill or no kill. */
async function checkTurnInvariants(run: SessionRun, result: BoundaryKillRunResult): Promise<void> {
  pathsTaken.set(result.killAtBoundary, result.reachedByFirst.map((entry) => `${entry.name} ${entry.detail ?? ""}`));
  const snapshot = await assertAgentSessionInvariants(run.client, flow, sessionId);
  const state = snapshot.state!;
  assert.equal(state.turnCount, 1);
  assert.equal(state.lastTurnError, null, "the turn completed");
  assert.equal(snapshot.usage.requests, 2, "each committed model call is counted once, a killed one not at all");

  const [user, request, ...rest] = snapshot.messages;
  assert.deepEqual([user?.role, user?.text], ["user", boundaryKillSessionMessage]);
  assert.deepEqual([request?.role, request?.text], ["assistant", boundaryKillSessionToolRequestText]);
  const requested = (request?.frameworkItem as { tool_calls: { id: string; name: string }[] }).tool_calls;
  assert.deepEqual(requested.map((call) => call.name), ["lookup_order", "send_refund", "check_warehouse"]);
  const results = rest.slice(0, 3);
  assert.deepEqual(results.map((message) => [message.role, message.toolCallId]), requested.map((call) => ["tool", call.id]), "every tool call has its one final result");
  const resultOf = (toolName: string): string | undefined => results.find((message) => message.toolName === toolName)?.text;
  assert.equal(resultOf("lookup_order"), "order 7: delivered damaged, paid 12 EUR");
  assert.equal(resultOf("check_warehouse"), failedToolResult(warehouseOfflineError), "the failing tool's error reached the model");
  assert.equal(rest.length, 4, "the turn stored its tool results and one answer");

  const runs = (toolName: string): SessionToolRunDetails[] => run.log.entries().filter((entry) => entry.name === toolName).map((entry) => entry.details as SessionToolRunDetails);
  const refunds = runs("send_refund");
  assert.ok(refunds.length <= 1, `the single-attempt send_refund ran ${refunds.length} times`);
  assert.ok(runs("lookup_order").length <= 2 && runs("check_warehouse").length <= 2, "one kill reruns a read tool at most once");
  const history = await run.client.getStepHistory(sessionId);
  const refundCommitted = completedExecutes(history, "CallSingleAttemptTool") === 1;
  const refundStatus = refundCommitted ? "succeeded" : "outcome_unknown";
  if (refundCommitted) {
    assert.equal(refunds.length, 1);
    assert.equal(resultOf("send_refund"), `refunded 12 EUR under ${sessionId}/turn-1/${requested[1]?.id}`);
    assert.equal(completedExecutes(history, "RecordToolOutcomeUnknown"), 0);
  } else {
    // Its Worker died between the claim and the commit: the refund may or may not have happened.
    assert.ok(run.log.entries().every((entry) => entry.name !== "send_refund" || entry.processId === result.firstProcessId), "only the killed process refunded");
    assert.equal(resultOf("send_refund"), outcomeUnknownToolResult, "a write that never committed is outcome_unknown, not rerun");
    assert.equal(completedExecutes(history, "RecordToolOutcomeUnknown"), 1, "outcome_unknown is recorded exactly once");
  }
  assert.equal(rest[3]?.text, `lookup_order: succeeded; send_refund: ${refundStatus}; check_warehouse: failed`, "the model saw every call final");

  const killedAt = result.killedAt;
  if (killedAt?.name === "agent.tool.before-record" && killedAt.detail === "send_refund") {
    assert.equal(refunds.length, 1, "killed after its side effect, before its record");
    assert.equal(refundStatus, "outcome_unknown");
  }
  if (killedAt === undefined) {
    assert.deepEqual(run.log.entries().map((entry) => entry.name).sort(), ["check_warehouse", "lookup_order", "send_refund"], "without a kill every tool ran once");
    assert.ok(history.every((entry) => entry.status === "completed"), "without a kill no attempt failed");
  }
}

/** The session scenario; `refundEffect` other than non_idempotent_write is the mislabelled, broken tool. */
function sessionScenario(options: { refundEffect?: ToolEffect } = {}): BoundaryKillScenario<SessionRun> {
  return {
    name: "agent session turn",
    standsBy: true,
    setUp: async () => {
      const engine = await PrivateEngine.start();
      const store = engine.openStore();
      return { engine, store, client: new Client({ store }), log: boundaryKillSessionLog(engine.directory) };
    },
    startProcess: (run, start) => KillableWorkerProcess.start({
      entryModulePath,
      engineAddress: run.engine.address,
      environment: {
        ...start.environment,
        [boundaryKillSessionDirectoryEnvironmentVariable]: run.engine.directory,
        [boundaryKillSessionRefundEffectEnvironmentVariable]: options.refundEffect ?? "",
      },
      readyTimeoutMs: start.readyTimeoutMs,
    }),
    begin: async (run) => {
      await run.client.start(flow, sessionId, { initial_message: boundaryKillSessionMessage });
    },
    isAtEnd: async (run) => {
      const [state] = await run.client.getAttributes(sessionId, flow.agentState);
      if (state === undefined || state.turnCount < 1 || state.activeTurnId !== null) return false;
      // At rest: only the wait for the next message is left, and it is waiting.
      const { executions } = await run.client.describe(sessionId);
      return executions.length === 1 && executions[0]?.stepType === "AwaitUserMessage" && executions[0].status === "waiting";
    },
    readStepHistory: (run, flowId) => run.client.getStepHistory(flowId),
    describeState: async (run) => {
      const [state] = await run.client.getAttributes(sessionId, flow.agentState);
      const { executions } = await run.client.describe(sessionId);
      const history = await run.client.getStepHistory(sessionId);
      return JSON.stringify({
        state,
        executions: executions.map((execution) => `${execution.stepType} ${execution.status}`),
        history: history.map((entry) => `${entry.stepType}.${entry.method} ${entry.status}#${entry.attempt}${entry.error === null ? "" : ` ${entry.error}`}`),
      });
    },
    checkInvariants: checkTurnInvariants,
    tearDown: async (run) => {
      await run.engine.stop();
    },
  };
}

// About 30 boundaries: npm test kills at every third (a different third each day), npm run test:soak at all of them.
void test("a turn with a read tool, an approved single-attempt write and a failing tool, killed at each durable boundary in turn, completes with gapless messages, every call final and the write never run twice", { timeout: 300_000 }, async (t) => {
  const sample = boundaryKillSample(3);
  t.diagnostic(sample.description);
  const report = await runBoundaryKillLoop(sessionScenario(), { concurrency: 2, fromBoundary: sample.fromBoundary, boundaryStep: sample.boundaryStep });
  t.diagnostic(formatBoundaryKillReport(report));
  assert.ok(report.kills >= 5, `the loop killed at ${report.kills} boundaries`);
  assert.deepEqual(report.violations, []);
  // One Worker slot and an approval given only when all else waits: every run passes the same boundaries in the same order.
  const pointOf = (entry: { name: string; detail: string | null } | undefined) => entry === undefined ? undefined : `${entry.name} ${entry.detail ?? ""}`;
  t.diagnostic(report.completeRun.map((entry, index) => `${index + 1}: ${pointOf(entry)}`).join("\n"));
  for (const run of report.runs) {
    if (run.killedAt !== undefined) assert.equal(pointOf(run.killedAt), pointOf(report.completeRun[run.killAtBoundary - 1]), `run ${run.killAtBoundary} died where a run without a kill passes its ${run.killAtBoundary}th boundary: it passed\n${pathsTaken.get(run.killAtBoundary)?.join("\n")}`);
  }
  if (!sample.isEveryBoundary) return;

  const names = new Set<string>(report.boundaries.map((coverage) => coverage.name));
  for (const name of [
    "worker.claim.before-commit", "worker.claim.after-commit", "worker.commit.before-commit", "worker.commit.after-commit",
    "rpc.before-commit", "agent.model.before-record", "agent.tool.before-record",
  ]) {
    assert.ok(names.has(name), `the loop killed at ${name}`);
  }
  const toolKills = report.boundaries.find((coverage) => coverage.name === "agent.tool.before-record")?.details ?? [];
  assert.deepEqual([...toolKills].sort(), ["check_warehouse", "lookup_order", "send_refund"], "each tool was killed after its side effect");
  assert.deepEqual(report.boundaries.find((coverage) => coverage.name === "rpc.before-commit")?.details, ["resolve_interrupt"]);
});

void test("the loop catches a write mislabelled idempotent_write that its retry runs twice after a kill between its side effect and its record", { timeout: 300_000 }, async () => {
  // The boundaries come in the same order in every run (the test above asserts it): the 23rd is
  // the refund's side effect before its record.
  const report = await runBoundaryKillLoop(sessionScenario({ refundEffect: "idempotent_write" }), { fromBoundary: 23, toBoundary: 23, failOnViolation: false });
  const [run] = report.runs;
  assert.deepEqual([run?.killedAt?.name, run?.killedAt?.detail], ["agent.tool.before-record", "send_refund"], formatBoundaryKillReport(report));
  assert.equal(run?.violations.length, 1, formatBoundaryKillReport(report));
  assert.match(run?.violations[0] ?? "", /the single-attempt send_refund ran 2 times/);
});
