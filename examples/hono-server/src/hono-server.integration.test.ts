/**
 * The example as it is deployed: the Hono server (`main.ts`) and
 * `perdure worker` as two real processes on one SQLite file, called over
 * real HTTP by two users with their bearer tokens. A turn waits for an
 * approval decided over REST and finishes in the Worker process; the other
 * user gets the 404 of a missing session on every route the served OpenAPI
 * document lists, changes nothing, and lists no sessions.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { pollUntil } from "@perdure/engine/testing";

const exampleFolder = fileURLToPath(new URL("..", import.meta.url));
const perdureBin = fileURLToPath(new URL("../../../packages/cli/bin/perdure.js", import.meta.url));

/** Starts a child process and waits for a line of its output to match `ready`. */
async function startProcess(t: TestContext, name: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string; exited: Promise<number | string> }> {
  const child = spawn(process.execPath, args, { cwd: exampleFolder, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PERDURE_DATABASE_URL: "", ...env } });
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  let output = "";
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 60 s:\n${output}`)), 60_000);
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      const found = ready.exec(output);
      if (found !== null) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before it started:\n${output}`));
    });
  });
  return { child, match, output: () => output, exited };
}

test("the Hono server and perdure worker on one SQLite file serve each user only their own sessions over HTTP", { timeout: 300_000 }, async (t) => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-hono-server-"));
  t.after(() => rmSync(folder, { recursive: true, force: true }));
  const database = join(folder, "sessions.db");
  const tokens = { alice: randomBytes(24).toString("hex"), bob: randomBytes(24).toString("hex") };
  const worker = await startProcess(t, "perdure worker", [perdureBin, "worker", "--db", database, "--concurrency", "2", "src/agents.ts"], {}, /perdure worker: \S+ running OrderDesk on /);
  const server = await startProcess(t, "the Hono server", ["src/main.ts"], {
    PORT: "0",
    PERDURE_DB: database,
    HONO_SERVER_TOKENS: `alice=${tokens.alice},bob=${tokens.bob}`,
  }, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
  const baseUrl = server.match[1] ?? "";

  const call = async (user: keyof typeof tokens | "nobody", method: string, path: string, body?: unknown): Promise<{ status: number; text: string; headers: Headers }> => {
    const headers: Record<string, string> = user === "nobody" ? {} : { authorization: `Bearer ${tokens[user]}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: response.status, text: await response.text(), headers: response.headers };
  };
  const json = async (user: keyof typeof tokens, method: string, path: string, body?: unknown, status = 200): Promise<Record<string, unknown>> => {
    const response = await call(user, method, path, body);
    assert.equal(response.status, status, `${user} ${method} ${path}: ${response.text}`);
    return JSON.parse(response.text) as Record<string, unknown>;
  };

  // Alice starts a session and a turn that needs her approval.
  const created = await json("alice", "POST", "/api/sessions", {}, 201);
  assert.equal(created["agent"], "OrderDesk");
  const sessionId = String(created["sessionId"]);
  const stream = await call("alice", "POST", "/api/chat", { id: sessionId, messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "please refund order 1002" }] }] });
  assert.equal(stream.status, 200, stream.text);
  assert.match(stream.text, /"type":"tool-approval-request"/, "the turn streamed its approval request");
  const pendingApproval = async (): Promise<string | undefined> => {
    const snapshot = await json("alice", "GET", `/api/sessions/${sessionId}/snapshot`) as { pending_interrupts?: { interrupt_id: string; kind: string }[] };
    return snapshot.pending_interrupts?.find((interrupt) => interrupt.kind === "approval")?.interrupt_id;
  };
  await pollUntil(async () => (await pendingApproval()) !== undefined, { timeoutMs: 30_000, description: "alice's refund to wait for approval" });
  const interruptId = (await pendingApproval()) ?? "";
  const before = (await call("alice", "GET", `/api/sessions/${sessionId}/snapshot`)).text;

  // Bob, and callers without a valid token, reach none of it.
  const document = await json("bob", "GET", "/api/openapi.json") as { paths: Record<string, Record<string, unknown>> };
  const bodies: Record<string, unknown> = { approvals: { approved: true }, questions: { answer: "S" }, execute: { revision: 1 }, steer: { text: "refund it to me" }, delete: { messageId: "1" }, settings: { sessionSettings: {} }, fork: { throughTurn: 0 } };
  let sessionRoutes = 0;
  for (const [template, operations] of Object.entries(document.paths)) {
    if (!template.includes("{id}")) continue;
    for (const method of Object.keys(operations).filter((key) => key === "get" || key === "post")) {
      const path = `/api${template.replace("{id}", sessionId).replace("{interruptId}", interruptId)}`;
      const lastWord = template.split("/").filter((segment) => !segment.startsWith("{")).at(-1) ?? "";
      const body = method === "post" ? (bodies[lastWord] ?? {}) : undefined;
      const response = await call("bob", method.toUpperCase(), path, body);
      assert.ok(response.status === 404 || response.status === 403, `bob ${method.toUpperCase()} ${path} answered ${response.status}: ${response.text}`);
      assert.doesNotMatch(response.text, /refund|1002|OrderDesk/, `bob ${method.toUpperCase()} ${path} leaked nothing`);
      sessionRoutes += 1;
    }
  }
  assert.ok(sessionRoutes >= 15, `the OpenAPI document listed ${sessionRoutes} session routes`);
  const bobChat = await call("bob", "POST", "/api/chat", { id: sessionId, messages: [{ id: "u2", role: "user", parts: [{ type: "text", text: "refund order 1001 to me" }] }] });
  assert.equal(bobChat.status, 404, bobChat.text);
  assert.deepEqual(await json("bob", "GET", "/api/sessions"), { sessions: [] }, "bob's list leaks nothing");
  for (const [who, headers] of [["no token", {}], ["a wrong token", { authorization: `Bearer ${"0".repeat(48)}` }], ["alice's token as Basic", { authorization: `Basic ${tokens.alice}` }]] as const) {
    const refused = await fetch(`${baseUrl}/api/sessions/${sessionId}/snapshot`, { headers });
    assert.equal(refused.status, 401, who);
    assert.equal(refused.headers.get("www-authenticate"), 'Bearer realm="perdure"', who);
    assert.doesNotMatch(await refused.text(), /refund/, who);
  }
  assert.equal((await call("alice", "GET", `/api/sessions/${sessionId}/snapshot`)).text, before, "bob's calls changed nothing");

  // Alice approves over REST; the Worker process runs the refund and ends the turn.
  assert.deepEqual(await json("alice", "POST", `/api/sessions/${sessionId}/approvals/${interruptId}`, { approved: true }), { decided: true, approved: true });
  await pollUntil(async () => {
    const snapshot = await json("alice", "GET", `/api/sessions/${sessionId}/snapshot`) as { state: { status: string } };
    return snapshot.state.status === "waiting_for_user_message";
  }, { timeoutMs: 60_000, description: "the approved refund's turn to end in the Worker process" });
  const messages = await call("alice", "GET", `/api/sessions/${sessionId}/messages`);
  assert.match(messages.text, /refunded order 1002 \(Rain jacket\)/);
  const again = await call("alice", "POST", `/api/sessions/${sessionId}/approvals/${interruptId}`, { approved: false });
  assert.equal(again.status, 409, again.text);
  assert.match(again.text, /decided already/);
  const listed = await json("alice", "GET", "/api/sessions") as { sessions: { sessionId: string }[] };
  assert.deepEqual(listed.sessions.map((session) => session.sessionId), [sessionId]);

  // Both stop cleanly on SIGTERM: the server closes its connections and the store, the Worker drains.
  server.child.kill("SIGTERM");
  worker.child.kill("SIGTERM");
  assert.equal(await server.exited, 0, server.output());
  assert.equal(await worker.exited, 0, worker.output());
  assert.match(worker.output(), /perdure worker: drained; exiting/);
});
