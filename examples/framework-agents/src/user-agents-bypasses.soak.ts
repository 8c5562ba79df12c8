/**
 * Every bypass row of issue 32's table that applies to a framework, tried
 * on the user-written agents of test-fixtures/user-agents (one per
 * framework, as each framework's docs write one), served by one real
 * `perdure dev` against loopback fakes of the providers, driven over its
 * HTTP API as `useChat` drives it. Run by `npm run test:soak`; a sample
 * (rows 1, 4, 5, 6, 8, 9 and SIGKILL during an approved write) runs in
 * `npm test` through user-agents-dev-server.integration.test.ts.
 *
 * | row | what the user wrote                                  | frameworks                   | observed                                                   |
 * | 1   | Claude `allowedTools` naming a write                 | Claude                       | perdure dev refuses to start, naming `allowedTools`        |
 * | 2   | Claude `canUseTool`, `permissionMode`                | Claude                       | perdure dev refuses to start, naming each                  |
 * | 3,4 | a per-call approval function (true for 1001 only)    | all four                     | approval asked on the UI stream for 1001, not for 1002     |
 * | 5   | framework approval flag + an effect-only policy      | all four                     | approval asked on the UI stream                            |
 * | 6   | an approved write throwing Error("upstream 503")     | AI SDK, Mastra, Claude       | the message in the UI stream's error and the next request  |
 * | 7   | OpenAI tools with the default errorFunction          | OpenAI Agents                | a throwing read retried; a throwing write an error         |
 * | 8   | any Claude agent                                     | Claude                       | no title request; stale config folder removed              |
 * | 9   | AI SDK output/prepareStep/activeTools/stopWhen,      | AI SDK, Mastra               | refused at start by name; stopWhen warned                  |
 * |     | Mastra memory and sub-agents (agents)                |                              |                                                            |
 *
 * SIGKILL during an approved write (one effect) runs in the npm test file
 * for all four frameworks.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { findFreeLoopbackPorts } from "@perdure/agents/testing";
import { readFakeRequest, startFakeMessagesApi } from "@perdure/agents-claude-agent-sdk/testing";
import { checkEffectOnlyPolicyKeepsApproval, checkPerCallApproval, checkRefusedAtStart, checkThrowingReadRetried, checkThrowingWrite, type RowContext } from "./test-fixtures/user-agents/bypass-rows.ts";
import { createSession, killGroup, script, startDevServer, userAgents, type DevServer } from "./test-fixtures/user-agents/dev-server-driver.ts";
import { LoopbackOpenAiResponses } from "./test-fixtures/user-agents/loopback-openai-responses.ts";

test("every approval bypass of issue 32, on a user-written agent per framework behind perdure dev: asked on the UI stream, refused at start by name, or its error reaching the model", { timeout: 1_800_000 }, async (t) => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-user-bypasses-"));
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
  const devTmp = join(folder, "tmp");
  mkdirSync(devTmp);
  const deadPid = spawnSync("true").pid;
  mkdirSync(join(devTmp, `perdure-claude-code-${deadPid}-stale`), { mode: 0o700 });
  writeFileSync(join(devTmp, `perdure-claude-code-${deadPid}-stale`, "transcript.jsonl"), "{}\n");
  const env = {
    OPENAI_API_KEY: "sk-test-fake",
    OPENAI_BASE_URL: openAi.baseUrl,
    OPENAI_AGENTS_DISABLE_TRACING: "1",
    ANTHROPIC_API_KEY: "sk-ant-test-fake",
    ANTHROPIC_BASE_URL: anthropic.url,
    PERDURE_TEST_EFFECTS_FILE: effectsFile,
    TMPDIR: devTmp,
  };

  // Rows 1, 2 and 9 (refused): each entry's perdure dev exits at start, naming the option.
  await t.test("refused at start", async () => {
    await checkRefusedAtStart(folder, env, "claude-allowed-tools.ts", /queryOptions\.allowedTools is refused/);
    await checkRefusedAtStart(folder, env, "claude-can-use-tool.ts", /queryOptions\.canUseTool is refused/);
    await checkRefusedAtStart(folder, env, "claude-permission-mode.ts", /queryOptions\.permissionMode is refused/);
    await checkRefusedAtStart(folder, env, "ai-sdk-output.ts", /AI SDK agent setting output is refused/);
    await checkRefusedAtStart(folder, env, "ai-sdk-prepare-step.ts", /AI SDK agent setting prepareStep is refused/);
    await checkRefusedAtStart(folder, env, "ai-sdk-active-tools.ts", /AI SDK agent setting activeTools is refused/);
    await checkRefusedAtStart(folder, env, "mastra-memory.ts", /has Mastra memory/);
    await checkRefusedAtStart(folder, env, "mastra-sub-agents.ts", /has sub-agents \(agents\)/);
  });

  const [port] = await findFreeLoopbackPorts(1);
  assert.ok(port !== undefined);
  const server = await startDevServer(port, join(folder, "dev.db"), env);
  servers.push(server);
  const { origin } = server;

  // Row 9 (warned): a setting the session's loop replaces is named when perdure dev loads the agents.
  assert.match(server.log(), /AI SDK agent settings do not apply: stopWhen/);

  // Rows 3 to 7, each framework in its own session, the frameworks at once.
  const chargeOrders: Record<string, string> = { "ai-sdk": "141", "openai-agents": "142", mastra: "143", claude: "144" };
  await Promise.all(userAgents.map(async ({ flowType, framework }) => {
    const context: RowContext = {
      origin,
      sessionId: `rows-${flowType}`,
      framework,
      effectsFile,
      toolOutputsSentToModel: framework === "claude"
        ? () => anthropic.requests.flatMap((request) => readFakeRequest(request).turnToolResults.map((result) => result.output))
        : () => openAi.toolOutputs(),
    };
    await createSession(origin, context.sessionId, flowType);
    await checkPerCallApproval(context);
    await checkEffectOnlyPolicyKeepsApproval(context);
    const chargeOrder = chargeOrders[framework] ?? "";
    if (framework === "openai-agents") {
      // Row 7: the SDK's default errorFunction would hide the throw as a successful result; the session fails the call instead.
      await checkThrowingWrite(context, chargeOrder, /default errorFunction.*errorFunction: null/);
      await checkThrowingReadRetried(context);
    } else {
      await checkThrowingWrite(context, chargeOrder, /upstream 503/);
    }
  }));

  // Row 8: every request the harness sent was a model call of a turn (no title request), and the stale config folder is gone.
  assert.ok(anthropic.requests.length > 0);
  for (const request of anthropic.requests) {
    assert.ok(request.tools?.some((tool) => tool.name === "mcp__perdure__lookup_order"), `a request that is not the agent's model call: ${JSON.stringify(request).slice(0, 2000)}`);
  }
  assert.equal(readdirSync(devTmp).includes(`perdure-claude-code-${deadPid}-stale`), false);
});
