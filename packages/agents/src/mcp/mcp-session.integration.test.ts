/**
 * MCP tools through the whole stack: a Stepwise session on a real SQLite
 * file, a Worker in this process, the scripted model calling tools of the
 * notes server (the SDK's McpServer in a stdio child process).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startStepwiseTestAgent, payloadsOf, completedExecutes } from "../stepwise/test-fixtures/stepwise-test-agent.ts";
import { FileGate } from "../testing/file-gate.ts";
import { findFreeLoopbackPorts } from "../testing/find-free-loopback-ports.ts";
import { readStepHistory } from "../testing/read-step-history.ts";
import { outcomeUnknownToolResult } from "../contract/values/result-texts.ts";
import { createNotesSessionFlow, notesStdioConfig } from "./test-fixtures/mcp-session-flows.ts";
import { notesServerFolder } from "./test-fixtures/notes-mcp-servers.ts";

function executes(history: Awaited<ReturnType<typeof readStepHistory>>, stepType: string): [string, number][] {
  return history.filter((entry) => entry.stepType === stepType && entry.method === "execute").map((entry) => [entry.status, entry.attempt]);
}

describe("MCP tools in a Stepwise session", () => {
  it("a read tool runs in CallTool with the session's idempotency key, progress events, and its source reference stored", async (t) => {
    const folder = notesServerFolder(t);
    const flow = createNotesSessionFlow("McpNotesRead", [notesStdioConfig(folder.directory)]);
    const { sessions, engine } = await startStepwiseTestAgent(t, [flow]);
    await sessions.start("s1", { initialMessage: "call notes__note_stats" });
    await sessions.waitForTurnCount("s1", 1, { timeoutMs: 60_000 });
    const snapshot = await sessions.getAgentSnapshot("s1");
    assert.equal(snapshot.messages.at(-1)?.text, 'Results: notes: 1\n{"name": "welcome", "type": "resource_link", "uri": "notes://welcome"}');
    assert.deepEqual(folder.log.entries().filter((entry) => entry.name === "note_stats").map((entry) => entry.details), [{ key: "s1/turn-1/turn-1-call" }]);
    const events = await sessions.readEvents("s1");
    assert.deepEqual(payloadsOf(events, "tool_call_deferred"), [{ tool_call_id: "turn-1-call", tool_name: "notes__note_stats", effect: "read", requires_approval: false }]);
    assert.deepEqual(payloadsOf(events, "tool_call_finished").map((payload) => payload.status), ["succeeded"]);
    assert.deepEqual(payloadsOf(events, "mcp.tool_progress").map((payload) => [payload.tool_call_id, payload.progress, payload.total]), [["turn-1-call", 1, 3], ["turn-1-call", 2, 3], ["turn-1-call", 3, 3]]);
    assert.deepEqual(completedExecutes(await readStepHistory(engine.address, "s1")).filter((type) => type.startsWith("Call")), ["CallTool"]);
  });

  it("a task-only tool runs as a task polled inside its CallTool Step", async (t) => {
    const folder = notesServerFolder(t);
    const flow = createNotesSessionFlow("McpNotesTask", [notesStdioConfig(folder.directory)]);
    const { sessions, engine } = await startStepwiseTestAgent(t, [flow]);
    await sessions.start("t1", { initialMessage: "call notes__index_notes" });
    await sessions.waitForTurnCount("t1", 1, { timeoutMs: 60_000 });
    assert.equal((await sessions.getAgentSnapshot("t1")).messages.at(-1)?.text, "Results: indexed 1 notes");
    assert.deepEqual(folder.log.entries().filter((entry) => entry.name === "index_notes").map((entry) => entry.details), [{ key: "t1/turn-1/turn-1-call", ttl: 2_400_000 }]);
    assert.deepEqual(executes(await readStepHistory(engine.address, "t1"), "CallTool"), [["completed", 1]]);
  });

  it("an unannotated tool waits for approval and runs once in CallSingleAttemptTool", async (t) => {
    const folder = notesServerFolder(t);
    const flow = createNotesSessionFlow("McpNotesApproval", [notesStdioConfig(folder.directory)]);
    const { sessions, engine } = await startStepwiseTestAgent(t, [flow]);
    await sessions.start("a1", { initialMessage: 'call notes__email_note {"title":"welcome","to":"ana@example.com"}' });
    const [interrupt] = await sessions.waitForPendingInterrupts("a1", 1, { timeoutMs: 60_000 });
    assert.equal(interrupt?.kind, "approval");
    assert.equal(folder.log.count("email_note"), 0, "nothing ran before the approval");
    assert.equal(await sessions.resolveInterrupt("a1", { interruptId: interrupt.interruptId, approved: true }), true);
    await sessions.waitForTurnCount("a1", 1, { timeoutMs: 60_000 });
    assert.equal((await sessions.getAgentSnapshot("a1")).messages.at(-1)?.text, "Results: emailed welcome to ana@example.com");
    assert.equal(folder.log.count("email_note"), 1);
    assert.deepEqual(executes(await readStepHistory(engine.address, "a1"), "CallSingleAttemptTool"), [["completed", 1]]);
  });

  it("a server that is down while listing offers no tools, with a warning, and the turn still completes", async (t) => {
    const folder = notesServerFolder(t);
    const [port] = await findFreeLoopbackPorts(1);
    const warnings: string[] = [];
    const flow = createNotesSessionFlow("McpNotesDown", [{ transport: "streamable_http", name: "down", url: `http://127.0.0.1:${port!}/mcp` }, notesStdioConfig(folder.directory)], (message) => warnings.push(message));
    const { sessions } = await startStepwiseTestAgent(t, [flow]);
    await sessions.start("d1", { initialMessage: "how many tools?" });
    await sessions.waitForTurnCount("d1", 1, { timeoutMs: 60_000 });
    assert.equal((await sessions.getAgentSnapshot("d1")).messages.at(-1)?.text, "I see 9 tools.");
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /^MCP server down offers no tools/);
  });

  it("a stdio server SIGKILLed mid-call: a read is sent again with the same key and succeeds", async (t) => {
    const folder = notesServerFolder(t);
    const flow = createNotesSessionFlow("McpNotesKilledRead", [notesStdioConfig(folder.directory)]);
    const { sessions, engine } = await startStepwiseTestAgent(t, [flow]);
    const gate = new FileGate(folder.directory, "parked-read");
    await sessions.start("k1", { initialMessage: "call notes__parked_read" });
    await gate.waitUntilReached({ timeoutMs: 60_000 });
    const [during] = (await sessions.getAgentSnapshot("k1")).toolCalls;
    assert.deepEqual(JSON.parse(during?.toolSourceReference ?? "null"), { stepwise_tool_source: "mcp", reference: { server: "notes", tool: "parked_read", task_support: "forbidden" } });
    const [first] = folder.log.entries().filter((entry) => entry.name === "parked_read");
    process.kill(first!.processId, "SIGKILL");
    gate.open();
    await sessions.waitForTurnCount("k1", 1, { timeoutMs: 60_000 });
    assert.equal((await sessions.getAgentSnapshot("k1")).messages.at(-1)?.text, "Results: parked read done");
    const runs = folder.log.entries().filter((entry) => entry.name === "parked_read");
    assert.deepEqual(runs.map((entry) => entry.details), [{ key: "k1/turn-1/turn-1-call" }, { key: "k1/turn-1/turn-1-call" }]);
    assert.notEqual(runs[0]?.processId, runs[1]?.processId, "the retry reached a new server process");
    const history = await readStepHistory(engine.address, "k1");
    assert.deepEqual(executes(history, "CallTool"), [["failed", 1], ["completed", 2]]);
    assert.match(history.find((entry) => entry.stepType === "CallTool" && entry.status === "failed")?.error ?? "", /interrupted after it was sent/);
  });

  it("a stdio server SIGKILLed mid-call: a write records outcome_unknown and is never sent again", async (t) => {
    const folder = notesServerFolder(t);
    const flow = createNotesSessionFlow("McpNotesKilledWrite", [notesStdioConfig(folder.directory)]);
    const { sessions, engine } = await startStepwiseTestAgent(t, [flow]);
    const gate = new FileGate(folder.directory, "parked-write");
    await sessions.start("k2", { initialMessage: "call notes__parked_write" });
    await gate.waitUntilReached({ timeoutMs: 60_000 });
    const [first] = folder.log.entries().filter((entry) => entry.name === "parked_write");
    process.kill(first!.processId, "SIGKILL");
    gate.open();
    await sessions.waitForTurnCount("k2", 1, { timeoutMs: 60_000 });
    const snapshot = await sessions.getAgentSnapshot("k2");
    assert.equal(snapshot.messages.at(-1)?.text, `Results: ${outcomeUnknownToolResult}`);
    assert.deepEqual(payloadsOf(await sessions.readEvents("k2"), "tool_call_finished").map((payload) => payload.status), ["outcome_unknown"]);
    assert.equal(folder.log.count("parked_write"), 1);
    const history = await readStepHistory(engine.address, "k2");
    assert.deepEqual(executes(history, "CallSingleAttemptTool"), [["failed", 1]]);
    assert.deepEqual(executes(history, "RecordToolOutcomeUnknown"), [["completed", 1]]);
  });
});
