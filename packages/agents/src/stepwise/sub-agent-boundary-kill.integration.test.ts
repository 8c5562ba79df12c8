/**
 * A writer session with two researcher sub-agents (`agentTool`), each of
 * which makes a single-attempt write, on a private SQLite engine whose
 * Worker child process is SIGKILLed at each durable boundary of parent and
 * children in turn (claims, commits, the model's responses, each tool's side
 * effect before its record), then replaced. After every run: each child
 * session ran exactly one turn, each child's write ran at most once, and the
 * parent's answer holds every child's answer.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client, type Store } from "@perdure/engine";
import { boundaryKillSample, formatBoundaryKillReport, runBoundaryKillLoop, type BoundaryKillScenario } from "@perdure/engine/testing";
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import type { InvocationLog } from "../testing/invocation-log.ts";
import { KillableWorkerProcess } from "../testing/killable-worker-process.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { childSessionId } from "./agent-tool.ts";
import {
  createSubAgentKillFlows, subAgentKillDirectoryEnvironmentVariable, subAgentKillLog, subAgentKillParentId, subAgentKillTopics,
} from "./test-fixtures/sub-agent-kill-flows.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/sub-agent-kill-worker-main.ts", import.meta.url));
const childIds = subAgentKillTopics.map((_topic, index) => childSessionId(subAgentKillParentId, "research", `${subAgentKillParentId}/turn-1/r${index + 1}`));

interface Run {
  engine: PrivateEngine;
  store: Store;
  client: Client;
  writer: AgentSessionFlow;
  researcher: AgentSessionFlow;
  log: InvocationLog;
}

async function atRest(client: Client, flow: AgentSessionFlow, sessionId: string): Promise<boolean> {
  const [state] = await client.getAttributes(sessionId, flow.agentState);
  if (state === undefined || state.turnCount < 1 || state.activeTurnId !== null) return false;
  const { executions } = await client.describe(sessionId);
  return executions.length === 1 && executions[0]?.stepType === "AwaitUserMessage" && executions[0].status === "waiting";
}

const scenario: BoundaryKillScenario<Run> = {
  name: "parent with two sub-agents",
  standsBy: true,
  setUp: async () => {
    const engine = await PrivateEngine.start();
    const store = engine.openStore();
    const client = new Client({ store });
    const [writer, researcher] = createSubAgentKillFlows(client);
    return { engine, store, client, writer, researcher, log: subAgentKillLog(engine.directory) };
  },
  startProcess: (run, start) => KillableWorkerProcess.start({
    entryModulePath,
    engineAddress: run.engine.address,
    environment: { ...start.environment, [subAgentKillDirectoryEnvironmentVariable]: run.engine.directory },
    readyTimeoutMs: start.readyTimeoutMs,
  }),
  begin: async (run) => {
    await run.client.start(run.writer, subAgentKillParentId, { initial_message: "Write about the sea." });
  },
  isAtEnd: async (run) => {
    if (!(await atRest(run.client, run.writer, subAgentKillParentId))) return false;
    for (const childId of childIds) if (!(await atRest(run.client, run.researcher, childId))) return false;
    return true;
  },
  readStepHistory: (run, flowId) => run.client.getStepHistory(flowId),
  describeState: async (run) => {
    const lines: string[] = [];
    for (const sessionId of [subAgentKillParentId, ...childIds]) {
      try {
        const [state] = await run.client.getAttributes(sessionId, run.writer.agentState);
        const { executions } = await run.client.describe(sessionId);
        lines.push(`${sessionId}: ${JSON.stringify(state)} ${executions.map((execution) => `${execution.stepType} ${execution.status}`).join(", ")}`);
      } catch (error) {
        lines.push(`${sessionId}: ${String(error)}`);
      }
    }
    return lines.join("\n");
  },
  checkInvariants: async (run) => {
    const [parent] = await run.client.getAttributes(subAgentKillParentId, run.writer.agentState);
    assert.equal(parent?.turnCount, 1);
    assert.equal(parent?.lastTurnError, null);
    const parentSnapshot = await run.client.invokeRPC(run.writer.getAgentSnapshot, subAgentKillParentId, undefined);
    const answer = parentSnapshot.messages.at(-1)?.text ?? "";
    for (const topic of subAgentKillTopics) assert.ok(answer.includes(`findings on ${topic}`), `the parent's answer ${JSON.stringify(answer)} holds the ${topic} child's`);
    const runs = run.log.entries().filter((entry) => entry.name === "record_finding");
    for (const [index, childId] of childIds.entries()) {
      const [state] = await run.client.getAttributes(childId, run.researcher.agentState);
      assert.equal(state?.turnCount, 1, `${childId} ran one turn`);
      const writes = runs.filter((entry) => (entry.details as { sessionId?: string }).sessionId === childId);
      assert.ok(writes.length <= 1, `${childId}'s write ran ${writes.length} times`);
      const childSnapshot = await run.client.invokeRPC(run.researcher.getAgentSnapshot, childId, undefined);
      assert.equal(childSnapshot.messages.at(-1)?.text, `findings on ${subAgentKillTopics[index] ?? ""}`);
    }
    const sessions = await run.client.listFlows({ flowType: run.researcher.flowType, limit: 10 });
    assert.deepEqual(sessions.map((entry) => entry.flowId).sort(), [...childIds].sort(), "one child session per call, no more");
  },
  tearDown: async (run) => {
    await run.engine.stop();
  },
};

// About 76 boundaries: npm test kills at every fourth (a different quarter each day), npm run test:soak at all of them.
void test("a parent with two sub-agents, killed at each durable boundary of parent and children in turn: one turn per child, each child's write at most once, every answer reaches the parent", { timeout: 600_000 }, async (t) => {
  const sample = boundaryKillSample(4);
  t.diagnostic(sample.description);
  const report = await runBoundaryKillLoop(scenario, { concurrency: 2, fromBoundary: sample.fromBoundary, boundaryStep: sample.boundaryStep });
  t.diagnostic(formatBoundaryKillReport(report));
  assert.ok(report.kills >= 10, `the loop killed at ${report.kills} boundaries`);
  if (sample.isEveryBoundary) {
    const names = new Set<string>(report.boundaries.map((coverage) => coverage.name));
    for (const name of ["worker.claim.after-commit", "worker.commit.before-commit", "worker.commit.after-commit", "agent.model.before-record", "agent.tool.before-record"]) {
      assert.ok(names.has(name), `the loop killed at ${name}`);
    }
  }
  assert.deepEqual(report.violations, []);
});
