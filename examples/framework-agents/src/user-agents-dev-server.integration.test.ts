/**
 * A user's own agent in each framework (AI SDK, OpenAI Agents SDK, Mastra,
 * Claude Agent SDK), written the way each framework's docs write one (not
 * this example's code), served by the real `perdure dev` in a child process
 * against loopback fakes of the providers' HTTP APIs (OpenAI Responses;
 * Anthropic Messages for the Claude Code harness), and driven over
 * `perdure dev`'s HTTP API as a browser would: a read, a refund that waits
 * for approval, the approval, then SIGKILL of `perdure dev` while every
 * approved refund runs, and a restart on the same store. Each refund ran at
 * most once (exactly once: it started before the kill and nothing ran it
 * again), and each turn finishes, the model told the outcome is unknown.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { findFreeLoopbackPorts, pollUntil } from "@perdure/agents/testing";
import { readFakeRequest, startFakeMessagesApi } from "@perdure/agents-claude-agent-sdk/testing";
import { LoopbackOpenAiResponses, type ScriptedReply } from "./test-fixtures/user-agents/loopback-openai-responses.ts";

const repositoryRoot = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const cliPath = join(repositoryRoot, "packages/cli/src/cli.ts");
const entryPath = fileURLToPath(new URL("./test-fixtures/user-agents/entry.ts", import.meta.url));
const agents = [
  { flowType: "UserAiSdkAgent", framework: "ai-sdk" },
  { flowType: "UserOpenAiAgentsAgent", framework: "openai-agents" },
  { flowType: "UserMastraAgent", framework: "mastra" },
  { flowType: "UserClaudeAgent", framework: "claude" },
];
// The Claude Code harness takes tens of seconds per run on a loaded two-core machine; nothing here asserts time.
const waitMs = 240_000;

/** The scripted model both fakes follow: look an order up, refund one, then answer with the tool results. */
function script(lastUserText: string, toolOutputs: string[]): ScriptedReply {
  if (toolOutputs.length === 0 && /where is order/i.test(lastUserText)) return { toolCall: { name: "lookup_order", arguments: { order_id: "1001" } } };
  if (toolOutputs.length === 0 && /refund/i.test(lastUserText)) return { toolCall: { name: "refund_order", arguments: { order_id: "1002" } } };
  return { text: `Done: ${toolOutputs.join("; ")}` };
}

interface DevServer {
  origin: string;
  child: ChildProcess;
  log(): string;
}

async function startDevServer(port: number, databasePath: string, env: Record<string, string>): Promise<DevServer> {
  const child = spawn(process.execPath, [cliPath, "dev", "--port", String(port), "--db", databasePath, entryPath], {
    cwd: repositoryRoot,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PERDURE_DATABASE_URL: "", PERDURE_DEV_TOKEN: "", OTEL_EXPORTER_OTLP_ENDPOINT: "", ...env },
  });
  let output = "";
  await new Promise<void>((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`perdure dev printed no URL within 120 s:\n${output}`)), 120_000);
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      if (/web UI and API at /.test(output)) {
        clearTimeout(timer);
        resolveStart();
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", () => {
      clearTimeout(timer);
      reject(new Error(`perdure dev exited:\n${output}`));
    });
  });
  return { origin: `http://127.0.0.1:${port}`, child, log: () => output };
}

/** SIGKILLs perdure dev and everything it started (the Claude Code harness), as when the machine dies. */
async function killGroup(server: DevServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise<void>((resolveExit) => server.child.once("exit", () => resolveExit()));
  try {
    process.kill(-(server.child.pid ?? 0), "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
  await exited;
}

async function call(origin: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${origin}${path}`, { method, ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }) });
  return { status: response.status, text: await response.text() };
}

interface InspectedSession {
  state: { turn_count: number; active_turn_id: string | null; last_turn_error: string | null } | null;
  messages: { role: string; text: string; tool_name?: string }[];
  pending_interrupts: { interrupt_id: string; tool_name: string }[];
}

async function inspect(origin: string, sessionId: string): Promise<InspectedSession> {
  const answer = await call(origin, "GET", `/api/sessions/${sessionId}/inspect`);
  assert.equal(answer.status, 200, answer.text);
  return (JSON.parse(answer.text) as { snapshot: InspectedSession }).snapshot;
}

async function turnEnded(origin: string, sessionId: string, turns: number): Promise<InspectedSession> {
  return pollUntil(async () => {
    const snapshot = await inspect(origin, sessionId);
    return snapshot.state !== null && snapshot.state.turn_count >= turns && snapshot.state.active_turn_id === null ? snapshot : undefined;
  }, { timeoutMs: waitMs, intervalMs: 250, description: `${sessionId} to end turn ${turns}` });
}

/** Sends a user message as `useChat` does, reading the UI message stream to its end. */
async function chat(origin: string, sessionId: string, messageId: string, text: string): Promise<void> {
  const answer = await call(origin, "POST", "/api/chat", { id: sessionId, messages: [{ id: messageId, role: "user", parts: [{ type: "text", text }] }] });
  assert.equal(answer.status, 200, answer.text);
}

test("a user's agent in each of four frameworks, behind perdure dev with loopback providers: a read, an approved refund, SIGKILL during it, a restart: the refund ran once and every turn finishes", { timeout: 900_000 }, async (t) => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-user-agents-"));
  const openAi = await new LoopbackOpenAiResponses(script).start();
  let claudeCalls = 0;
  const anthropic = await startFakeMessagesApi(async (request) => {
    const facts = readFakeRequest(request);
    const reply = script(facts.lastUserText, facts.turnToolResults.map((result) => result.output));
    claudeCalls += 1;
    return "text" in reply ? { kind: "text", text: reply.text } : { kind: "tool_use", id: `toolu_user_${claudeCalls}`, name: `mcp__perdure__${reply.toolCall.name}`, input: reply.toolCall.arguments };
  });
  const servers: DevServer[] = [];
  t.after(async () => {
    for (const server of servers) await killGroup(server);
    await openAi.close();
    await anthropic.close();
    rmSync(folder, { recursive: true, force: true });
  });
  const effectsFile = join(folder, "effects.log");
  const gateFile = join(folder, "refunds.gate");
  const env = {
    OPENAI_API_KEY: "sk-test-fake",
    OPENAI_BASE_URL: openAi.baseUrl,
    OPENAI_AGENTS_DISABLE_TRACING: "1",
    ANTHROPIC_API_KEY: "sk-ant-test-fake",
    ANTHROPIC_BASE_URL: anthropic.url,
    PERDURE_TEST_EFFECTS_FILE: effectsFile,
    PERDURE_TEST_GATE_FILE: gateFile,
  };
  const [port] = await findFreeLoopbackPorts(1);
  assert.ok(port !== undefined);
  const databasePath = join(folder, "dev.db");
  const first = await startDevServer(port, databasePath, env);
  servers.push(first);
  const effects = (): string[] => (existsSync(effectsFile) ? readFileSync(effectsFile, "utf8").split("\n").filter((line) => line !== "") : []);

  await Promise.all(agents.map(async ({ flowType }) => {
    const sessionId = `user-${flowType}`;
    const created = await call(first.origin, "POST", "/api/sessions", { sessionId, agent: flowType });
    assert.equal(created.status, 201, created.text);
    // A read: answered from the tool, no approval.
    await chat(first.origin, sessionId, "u1", "Where is order 1001?");
    const afterRead = await turnEnded(first.origin, sessionId, 1);
    assert.equal(afterRead.state?.last_turn_error, null, `${flowType}: ${first.log().slice(-2000)}`);
    // The Claude Code harness appends a system reminder to a tool result; the answer starts with it.
    assert.match(afterRead.messages.at(-1)?.text ?? "", /^Done: order 1001 shipped/, flowType);
    // A write: it waits for the person's approval, and nothing runs before it.
    await chat(first.origin, sessionId, "u2", "Please refund order 1002.");
    const [approval] = await pollUntil(async () => {
      const pending = (await inspect(first.origin, sessionId)).pending_interrupts;
      return pending.length > 0 ? pending : undefined;
    }, { timeoutMs: waitMs, intervalMs: 250, description: `${flowType}'s refund approval` });
    assert.equal(approval?.tool_name, "refund_order", flowType);
    assert.equal(effects().filter((line) => line.startsWith(`${agents.find((agent) => agent.flowType === flowType)?.framework} `)).length, 0, `${flowType} refunded before the approval`);
    const decided = await call(first.origin, "POST", `/api/sessions/${sessionId}/approvals/${approval.interrupt_id}`, { approved: true });
    assert.equal(decided.status, 200, decided.text);
  }));

  // Every approved refund has started (and waits at the gate): kill perdure dev and all it started.
  await pollUntil(async () => (effects().length >= agents.length ? true : undefined), { timeoutMs: waitMs, intervalMs: 100, description: "every refund to start" });
  await killGroup(first);
  assert.deepEqual(effects().sort(), agents.map(({ framework }) => `${framework} refund 1002`).sort());

  // The restart on the same store, with the gate open: a refund that ran again would add a line now.
  writeFileSync(gateFile, "open");
  const second = await startDevServer(port, databasePath, env);
  servers.push(second);
  for (const { flowType } of agents) {
    const sessionId = `user-${flowType}`;
    const ended = await turnEnded(second.origin, sessionId, 2);
    assert.equal(ended.state?.last_turn_error, null, `${flowType}: ${second.log().slice(-2000)}`);
    const refund = ended.messages.findLast((message) => message.role === "tool");
    assert.ok(refund !== undefined, `${flowType} stored the refund's result`);
    assert.match(refund.text, /outcome is unknown|interrupted/i, `${flowType}'s refund result tells the model the outcome is unknown`);
    assert.match(ended.messages.at(-1)?.text ?? "", /^Done: /, `${flowType}'s turn finished with the model's answer`);
  }
  assert.deepEqual(effects().sort(), agents.map(({ framework }) => `${framework} refund 1002`).sort(), "each refund ran once, before the kill, and never again");
});
