/**
 * Tasks of a Streamable HTTP server without protocol sessions (the notes
 * server's `http-stateless` mode, the SDK's in-memory task store) become
 * tool tasks: the tool Step returns ToolTaskStarted and ends, PollToolTask
 * polls on Timers, across a Worker restart too, and cancel_turn sends
 * tasks/cancel.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { pollUntil } from "@perdure/engine/testing";
import { payloadsOf, startStepwiseTestAgent } from "../stepwise/test-fixtures/stepwise-test-agent.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { KillableWorkerProcess } from "../testing/killable-worker-process.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { readStepHistory } from "../testing/read-step-history.ts";
import type { DeferredToolExecution } from "../contract/agent-framework-runner.ts";
import { McpToolSource } from "./mcp-tool-source.ts";
import { createNotesSessionFlow, crashNotesFlow, notesFolderEnvironmentVariable, notesRemoteUrlEnvironmentVariable } from "./test-fixtures/mcp-session-flows.ts";
import { notesServerFolder, startNotesHttpServer, type NotesServerFolder } from "./test-fixtures/notes-mcp-servers.ts";

function executes(history: Awaited<ReturnType<typeof readStepHistory>>, stepType: string): [string, number][] {
  return history.filter((entry) => entry.stepType === stepType && entry.method === "execute").map((entry) => [entry.status, entry.attempt]);
}

async function statelessServer(t: TestContext, folder: NotesServerFolder) {
  const server = await startNotesHttpServer(t, folder, "remote", undefined, "http-stateless");
  return server.config;
}

function rpcs(folder: NotesServerFolder): (string | null)[] {
  return folder.log.entries().filter((entry) => entry.name === "http_request").map((entry) => (entry.details as { rpc: string | null }).rpc);
}

function taskExecution(overrides: Partial<DeferredToolExecution>): DeferredToolExecution {
  const write = async (): Promise<void> => undefined;
  return {
    flowId: "f", idempotencyKey: "f/turn-1/c1", attempt: 1, cancellationSignal: new AbortController().signal, deadline: new Date(Date.now() + 60_000),
    heartbeat: async () => undefined, heartbeatCheckpoint: undefined, saveHeartbeatCheckpoint: async () => undefined, supportsToolTasks: true,
    events: { write, textDelta: write, reasoningDelta: write },
    toolCall: { toolCallId: "c1", turnId: "turn-1", toolName: "x__index_notes", arguments: "{}", toolSourceReference: JSON.stringify({ server: "x", tool: "index_notes", task_support: "required" }) } as unknown as DeferredToolExecution["toolCall"],
    ...overrides,
  };
}

describe("MCP tasks as tool tasks", () => {
  it("only a server without protocol sessions hands its task over, saving the task ID before it returns; a saved ID is resumed without a call", async (t) => {
    const folder = notesServerFolder(t);
    const stateless = await startNotesHttpServer(t, folder, "x", undefined, "http-stateless");
    const source = new McpToolSource([stateless.config], { onWarning: () => undefined });
    const saved: string[] = [];
    const started = await source.executeDeferredToolCall(taskExecution({ saveHeartbeatCheckpoint: async (text) => { saved.push(text); } }));
    assert.ok("kind" in started && started.kind === "tool_task_started");
    assert.deepEqual(saved, [started.taskId]);
    assert.equal(folder.log.count("index_notes"), 1);
    const resumed = await source.executeDeferredToolCall(taskExecution({ heartbeatCheckpoint: started.taskId }));
    assert.deepEqual(resumed, { kind: "tool_task_started", taskId: started.taskId, pollIntervalSeconds: 1 });
    assert.equal(folder.log.count("index_notes"), 1, "the retry resumed the saved task");

    const stateful = await startNotesHttpServer(t, folder, "x");
    const sessionBound = new McpToolSource([stateful.config], { onWarning: () => undefined });
    assert.deepEqual(await sessionBound.executeDeferredToolCall(taskExecution({})), { output: "indexed 1 notes" }, "a session-bound task is polled in the Step");
  });


  it("the tool Step starts the task and ends; PollToolTask polls it with mcp.task_status events and records its result", async (t) => {
    const folder = notesServerFolder(t, { NOTES_MCP_TASK_MS: "2500" });
    const flow = createNotesSessionFlow("McpRemoteTask", [await statelessServer(t, folder)]);
    const { sessions, engine } = await startStepwiseTestAgent(t, [flow]);
    await sessions.start("p1", { initialMessage: "call remote__index_notes" });
    await sessions.waitForTurnCount("p1", 1, { timeoutMs: 60_000 });

    assert.equal((await sessions.getAgentSnapshot("p1")).messages.at(-1)?.text, "Results: indexed 1 notes");
    assert.deepEqual(folder.log.entries().filter((entry) => entry.name === "index_notes").map((entry) => entry.details), [{ key: "p1/turn-1/turn-1-call", ttl: 86_400_000 }]);
    const events = await sessions.readEvents("p1");
    const [started] = payloadsOf(events, "tool_task_started");
    assert.equal(started?.tool_call_id, "turn-1-call");
    const statuses = payloadsOf(events, "mcp.task_status");
    assert.deepEqual(statuses.map((payload) => payload.status), ["working", "completed"], "one event per status change");
    assert.equal(statuses[0]?.task_id, started?.task_id);
    const history = await readStepHistory(engine.address, "p1");
    assert.deepEqual(executes(history, "CallTool"), [["completed", 1]]);
    assert.ok(executes(history, "PollToolTask").filter(([status]) => status === "completed").length >= 2);
    assert.equal(rpcs(folder).filter((rpc) => rpc === "tasks/result").length, 1);
  });

  it("cancel_turn abandons the task: CancelToolTask sends tasks/cancel and the call records outcome_unknown", async (t) => {
    const folder = notesServerFolder(t, { NOTES_MCP_TASK_MS: "600000" });
    const flow = createNotesSessionFlow("McpRemoteTaskCancel", [await statelessServer(t, folder)]);
    const { sessions, engine } = await startStepwiseTestAgent(t, [flow]);
    await sessions.start("c1", { initialMessage: "call remote__index_notes" });
    await pollUntil(async () => ((await sessions.getAgentSnapshot("c1")).toolCalls[0]?.status === "waiting_for_task" ? true : undefined), { timeoutMs: 60_000, description: "the task to start" });
    assert.equal(await sessions.cancelTurn("c1"), true);
    await sessions.waitForTurnCount("c1", 1, { timeoutMs: 60_000 });

    assert.deepEqual(payloadsOf(await sessions.readEvents("c1"), "tool_call_finished").map((payload) => payload.status), ["outcome_unknown"]);
    assert.equal(rpcs(folder).filter((rpc) => rpc === "tasks/cancel").length, 1);
    assert.deepEqual(executes(await readStepHistory(engine.address, "c1"), "CancelToolTask"), [["completed", 1]]);
  });

  it("a task is polled across a Worker SIGKILL: the new Worker polls the same task and the tool is called once", { timeout: 300_000 }, async (t) => {
    const folder = notesServerFolder(t, { NOTES_MCP_TASK_MS: "6000" });
    const remote = await statelessServer(t, folder);
    const flow = crashNotesFlow(folder.directory, String(remote.url));
    const engine = await PrivateEngine.start();
    const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow], isWorkerInProcess: false });
    const workers: KillableWorkerProcess[] = [];
    t.after(async () => {
      for (const worker of workers) await worker.kill();
      await environment.close();
      await engine.stop();
    });
    const startWorker = async () => {
      const worker = await KillableWorkerProcess.start({
        entryModulePath: fileURLToPath(new URL("./test-fixtures/mcp-session-worker-main.ts", import.meta.url)),
        engineAddress: engine.address,
        environment: { [notesFolderEnvironmentVariable]: folder.directory, [notesRemoteUrlEnvironmentVariable]: String(remote.url) },
      });
      workers.push(worker);
      return worker;
    };
    const sessions = new AgentSessionTestClient(environment.client, flow);
    const doomed = await startWorker();
    await sessions.start("k1", { initialMessage: "call remote__index_notes" });
    await pollUntil(async () => ((await sessions.getAgentSnapshot("k1")).toolCalls[0]?.status === "waiting_for_task" ? true : undefined), { timeoutMs: 60_000, description: "the task to start" });
    await doomed.kill();
    await startWorker();
    await sessions.waitForTurnCount("k1", 1, { timeoutMs: 60_000 });

    assert.equal((await sessions.getAgentSnapshot("k1")).messages.at(-1)?.text, "Results: indexed 1 notes");
    assert.equal(folder.log.count("index_notes"), 1, "the tool was called once");
    const history = await readStepHistory(engine.address, "k1");
    assert.deepEqual(executes(history, "CallTool"), [["completed", 1]]);
  });
});
