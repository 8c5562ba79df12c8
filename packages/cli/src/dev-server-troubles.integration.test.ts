/**
 * What `perdure dev` tells a developer when something goes wrong or waits
 * for a person: each failed model call and tool call in the terminal with
 * its session, Step, attempt, message and stack; pending approvals and
 * questions in `/api/sessions`; and why an answer was refused.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { findFreeLoopbackPorts, pollUntil } from "@perdure/agents/testing";
import { createSession, json } from "./test-fixtures/dev-api.ts";
import { DevServerProcess } from "./test-fixtures/dev-server-process.ts";

const troubledEntryPath = fileURLToPath(new URL("./test-fixtures/troubled-agent.ts", import.meta.url));

interface SessionRow { sessionId: string; lastTurnError: string | null; pendingApprovals: number; pendingQuestions: number; agentStatus: string | null }

let server: DevServerProcess;
let folder: string;

async function sendMessage(sessionId: string, text: string): Promise<string> {
  const response = await fetch(`${server.origin}/api/chat`, { method: "POST", headers: json, body: JSON.stringify({ id: sessionId, messages: [{ id: `m-${Date.now()}`, role: "user", parts: [{ type: "text", text }] }] }) });
  assert.equal(response.status, 200);
  return response.text();
}

async function sessionRow(sessionId: string): Promise<SessionRow> {
  const { sessions } = await (await fetch(`${server.origin}/api/sessions`)).json() as { sessions: SessionRow[] };
  const row = sessions.find((session) => session.sessionId === sessionId);
  assert.ok(row !== undefined, `no row for ${sessionId}`);
  return row;
}

describe("perdure dev with an agent whose model and tools fail", () => {
  before(async () => {
    folder = mkdtempSync(join(tmpdir(), "perdure-dev-troubles-"));
    mkdirSync(join(folder, "gates"));
    const [port] = await findFreeLoopbackPorts(1);
    assert.ok(port !== undefined);
    server = await DevServerProcess.start({ port, databasePath: join(folder, "dev.db"), gateDirectory: join(folder, "gates"), entry: troubledEntryPath });
  });
  after(async () => {
    await server.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it("logs every failed model call with the session, Step, attempt, message and stack, and the turn's error is in /api/sessions", { timeout: 300_000 }, async () => {
    await createSession(server.origin, "s-model");
    await sendMessage("s-model", "break the model");
    const row = await pollUntil(async () => {
      const current = await sessionRow("s-model");
      return current.lastTurnError === null ? undefined : current;
    }, { timeoutMs: 60_000, description: "the failed turn" });
    assert.equal(row.lastTurnError, "Error: the model provider is down (test)");
    for (const attempt of [1, 2, 3]) {
      assert.match(server.log, new RegExp(`^perdure dev: session s-model \\(TroubledAgent\\): RunModel attempt ${attempt} failed \\(execution \\S+\\): Error: the model provider is down \\(test\\)\\n {4}at [^\\n]*\\(file://\\S+troubled-agent\\.ts:\\d+:\\d+\\)`, "m"));
    }
  });

  it("logs every failed attempt of a tool call that throws, with the tool's own frame", { timeout: 300_000 }, async () => {
    await createSession(server.origin, "s-tool");
    await sendMessage("s-tool", "use the broken tool");
    await pollUntil(() => /session s-tool \(TroubledAgent\): CallTool attempt 3 failed/.test(server.log), { timeoutMs: 60_000, description: "the third failed CallTool attempt in the log" });
    assert.match(server.log, /^perdure dev: session s-tool \(TroubledAgent\): CallTool attempt 1 failed \(execution \S+\): TypeError: flaky_lookup cannot read the order table \(test\)\n {4}at Object\.execute \(file:\/\/\S+troubled-agent\.ts:\d+:\d+\)/m);
  });

  it("/api/sessions counts a pending approval and a pending question, and a refused answer says why", { timeout: 300_000 }, async () => {
    await createSession(server.origin, "s-approve");
    await sendMessage("s-approve", "send the invoice");
    const approving = await pollUntil(async () => {
      const current = await sessionRow("s-approve");
      return current.pendingApprovals > 0 ? current : undefined;
    }, { timeoutMs: 30_000, description: "the pending approval" });
    assert.deepEqual([approving.pendingApprovals, approving.pendingQuestions], [1, 0]);

    await createSession(server.origin, "s-ask");
    await sendMessage("s-ask", "ask me");
    const asking = await pollUntil(async () => {
      const current = await sessionRow("s-ask");
      return current.pendingQuestions > 0 ? current : undefined;
    }, { timeoutMs: 30_000, description: "the pending question" });
    assert.deepEqual([asking.pendingApprovals, asking.pendingQuestions], [0, 1]);
    const inspection = await (await fetch(`${server.origin}/api/sessions/s-ask/inspect`)).json() as { snapshot: { pending_interrupts: { interrupt_id: string }[] } };
    const interruptId = inspection.snapshot.pending_interrupts[0]?.interrupt_id;
    assert.ok(interruptId !== undefined);
    const answer = async (id: string, body: unknown): Promise<unknown> => {
      const response = await fetch(`${server.origin}/api/sessions/s-ask/questions/${encodeURIComponent(id)}`, { method: "POST", headers: json, body: JSON.stringify(body) });
      assert.equal(response.status, 200);
      return response.json();
    };
    assert.deepEqual(await answer(interruptId, { answer: "green" }), { answered: false, reason: "the answer must be one of: red, blue" });
    assert.deepEqual(await answer("no-such-question", { answer: "red" }), { answered: false, reason: "question no-such-question is not waiting for an answer: it was answered, declined or expired, or its turn ended" });
    assert.deepEqual(await answer(interruptId, { answer: "red" }), { answered: true });
  });
});
