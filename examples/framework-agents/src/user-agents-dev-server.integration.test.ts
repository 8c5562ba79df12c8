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
 *
 * Then a sample of issue 32's bypass rows on the same processes (every row,
 * for every framework, runs in user-agents-bypasses.soak.ts under
 * `npm run test:soak`): the Claude harness sends no title request, its
 * config folders are mode 0700 and a stale one is removed (row 8); the AI
 * SDK's ignored stopWhen is warned about by name (row 9); the AI SDK's
 * per-call `needsApproval` function (row 4), its `needsApproval: true` under
 * an effect-only policy (row 5) and a throwing approved write (row 6), over
 * the UI stream; Claude `allowedTools` naming a write refused at start (row 1).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { findFreeLoopbackPorts, pollUntil } from "@perdure/agents/testing";
import { readFakeRequest, startFakeMessagesApi } from "@perdure/agents-claude-agent-sdk/testing";
import { checkEffectOnlyPolicyKeepsApproval, checkPerCallApproval, checkRefusedAtStart, checkThrowingWrite, effectLines } from "./test-fixtures/user-agents/bypass-rows.ts";
import { chat, createSession, inspect, killGroup, script, startDevServer, turnEnded, userAgents, waitMs, call, type DevServer } from "./test-fixtures/user-agents/dev-server-driver.ts";
import { LoopbackOpenAiResponses } from "./test-fixtures/user-agents/loopback-openai-responses.ts";

test("a user's agent in each of four frameworks, behind perdure dev with loopback providers: a read, an approved refund, SIGKILL during it, a restart: the refund ran once and every turn finishes; then a sample of the approval bypasses", { timeout: 900_000 }, async (t) => {
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
  const watchers: NodeJS.Timeout[] = [];
  t.after(async () => {
    watchers.forEach((watcher) => clearInterval(watcher));
    for (const server of servers) await killGroup(server);
    await openAi.close();
    await anthropic.close();
    rmSync(folder, { recursive: true, force: true });
  });
  const effectsFile = join(folder, "effects.log");
  const gateFile = join(folder, "refunds.gate");
  // perdure dev's own temporary folder, where the Claude adapter keeps each harness run's config folder.
  const devTmp = join(folder, "tmp");
  mkdirSync(devTmp);
  // A config folder a killed Worker left behind (its process has ended), holding a transcript.
  const deadPid = spawnSync("true").pid;
  const staleFolder = join(devTmp, `perdure-claude-code-${deadPid}-stale`);
  mkdirSync(staleFolder, { mode: 0o700 });
  writeFileSync(join(staleFolder, "transcript.jsonl"), "{}\n");
  const env = {
    OPENAI_API_KEY: "sk-test-fake",
    OPENAI_BASE_URL: openAi.baseUrl,
    OPENAI_AGENTS_DISABLE_TRACING: "1",
    ANTHROPIC_API_KEY: "sk-ant-test-fake",
    ANTHROPIC_BASE_URL: anthropic.url,
    PERDURE_TEST_EFFECTS_FILE: effectsFile,
    PERDURE_TEST_GATE_FILE: gateFile,
    TMPDIR: devTmp,
  };
  const [port] = await findFreeLoopbackPorts(1);
  assert.ok(port !== undefined);
  const databasePath = join(folder, "dev.db");
  const first = await startDevServer(port, databasePath, env);
  servers.push(first);
  const effects = (): string[] => effectLines(effectsFile);

  // Row 9: a setting the session's loop replaces is named when perdure dev loads the agents.
  assert.match(first.log(), /AI SDK agent settings do not apply: stopWhen/, "the AI SDK agent's stopWhen is warned about by name");

  // Row 8: the modes of the harness's config folders while they exist.
  const configFolderModes = new Map<string, number>();
  const watchingFolders = setInterval(() => {
    for (const name of readdirSync(devTmp)) {
      if (!name.startsWith("perdure-claude-code-") || name.endsWith("-stale")) continue;
      try {
        configFolderModes.set(name, statSync(join(devTmp, name)).mode & 0o777);
      } catch {
        // The run ended and removed it between the listing and the stat.
      }
    }
  }, 20);
  watchers.push(watchingFolders);

  await Promise.all(userAgents.map(async ({ flowType, framework }) => {
    const sessionId = `user-${flowType}`;
    await createSession(first.origin, sessionId, flowType);
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
    assert.equal(effects().filter((line) => line.startsWith(`${framework} `)).length, 0, `${flowType} refunded before the approval`);
    const decided = await call(first.origin, "POST", `/api/sessions/${sessionId}/approvals/${approval.interrupt_id}`, { approved: true });
    assert.equal(decided.status, 200, decided.text);
  }));
  clearInterval(watchingFolders);

  // Every approved refund has started (and waits at the gate): kill perdure dev and all it started.
  await pollUntil(async () => (effects().length >= userAgents.length ? true : undefined), { timeoutMs: waitMs, intervalMs: 100, description: "every refund to start" });
  await killGroup(first);
  assert.deepEqual(effects().sort(), userAgents.map(({ framework }) => `${framework} refund 1002`).sort());

  // The restart on the same store, with the gate open: a refund that ran again would add a line now.
  writeFileSync(gateFile, "open");
  const second = await startDevServer(port, databasePath, env);
  servers.push(second);
  for (const { flowType } of userAgents) {
    const sessionId = `user-${flowType}`;
    const ended = await turnEnded(second.origin, sessionId, 2);
    assert.equal(ended.state?.last_turn_error, null, `${flowType}: ${second.log().slice(-2000)}`);
    const refund = ended.messages.findLast((message) => message.role === "tool");
    assert.ok(refund !== undefined, `${flowType} stored the refund's result`);
    assert.match(refund.text, /outcome is unknown|interrupted/i, `${flowType}'s refund result tells the model the outcome is unknown`);
    assert.match(ended.messages.at(-1)?.text ?? "", /^Done: /, `${flowType}'s turn finished with the model's answer`);
  }
  assert.deepEqual(effects().sort(), userAgents.map(({ framework }) => `${framework} refund 1002`).sort(), "each refund ran once, before the kill, and never again");

  // Row 8: every request the harness sent was a turn's model call (no title request), the stale folder is gone, and the live ones were the owner's alone.
  assert.ok(anthropic.requests.length > 0);
  for (const request of anthropic.requests) {
    assert.ok(request.tools?.some((tool) => tool.name === "mcp__perdure__lookup_order"), `a request that is not the agent's model call: ${JSON.stringify(request).slice(0, 2000)}`);
  }
  assert.equal(readdirSync(devTmp).includes(`perdure-claude-code-${deadPid}-stale`), false, "the stale config folder of an ended process was removed");
  assert.ok(configFolderModes.size > 0, "a harness run's config folder was seen");
  for (const [name, mode] of configFolderModes) assert.equal(mode, 0o700, `${name} is mode 0700`);

  // Rows 4, 5 and 6 on the AI SDK agent, on the restarted perdure dev.
  const context = { origin: second.origin, sessionId: "rows-UserAiSdkAgent", framework: "ai-sdk", effectsFile, toolOutputsSentToModel: () => openAi.toolOutputs() };
  await createSession(second.origin, context.sessionId, "UserAiSdkAgent");
  await checkPerCallApproval(context);
  await checkEffectOnlyPolicyKeepsApproval(context);
  await checkThrowingWrite(context, "141", /upstream 503/);

  // Row 1: Claude allowedTools naming a non-idempotent write: perdure dev refuses to start, naming the option.
  await checkRefusedAtStart(folder, env, "claude-allowed-tools.ts", /queryOptions\.allowedTools is refused/);
});
