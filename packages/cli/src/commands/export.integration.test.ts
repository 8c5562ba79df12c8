import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client, Worker } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import { forkSession, type SessionFixture } from "@perdure/agents";
import { loadAgentFlows } from "../entry/load-agent-flows.ts";

const cliPath = fileURLToPath(new URL("../cli.ts", import.meta.url));
const cliPackage = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const repositoryRoot = resolve(cliPackage, "../..");

/** A deterministic agent with a read tool and a write tool, as a user's entry module. */
const entrySource = `import { createStepwiseAgentSessionFlow, functionTool, ScriptedModelClient } from "@perdure/agents/stepwise";

const model = new ScriptedModelClient((request) => {
  const results = ScriptedModelClient.toolResults(request);
  if (results.length === 0) return { toolCalls: [{ name: "lookup_order", arguments: { order_id: "1001" }, id: "lookup-1" }] };
  if (results.length === 1) return { toolCalls: [{ name: "refund_order", arguments: { order_id: "1001" }, id: "refund-1" }] };
  return { text: "Order 1001 was refunded." };
});

export const refundAgentFlow = createStepwiseAgentSessionFlow({
  name: "refunds",
  instructions: "Look orders up and refund them.",
  model,
  tools: [
    functionTool({ name: "lookup_order", description: "Look up an order by its ID.", parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] }, effect: "read", execute: ({ order_id }) => \`order \${order_id}: shipped\` }),
    functionTool({ name: "refund_order", description: "Refund an order.", parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] }, effect: "non_idempotent_write", requiresApproval: false, execute: () => { if (process.env.REFUNDS_FORBIDDEN === "1") throw new Error("a replay must never refund"); return "refunded"; } }),
  ],
}, "RefundAgent");
`;

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  // The written test runs with refunds forbidden: a replay answers the write from the recording.
  // Without this runner's NODE_TEST_CONTEXT, the written test reports as a test run of its own.
  const environment = { ...process.env };
  delete environment["NODE_TEST_CONTEXT"];
  const result = spawnSync(process.execPath, args, { encoding: "utf8", cwd: repositoryRoot, env: { ...environment, REFUNDS_FORBIDDEN: "1" }, timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test("perdure export writes a session's fixture, and --as-test a node:test file that passes unchanged and fails with a diff on divergence; perdure inspect names a fork's source", async () => {
  // Inside the package, so the written test resolves @perdure/agents as a user's test would.
  const folder = mkdtempSync(join(cliPackage, ".export-test-"));
  const databasePath = join(folder, "dev.db");
  const entryPath = join(folder, "refund.agents.ts");
  writeFileSync(entryPath, entrySource);
  const store = SqliteStore.open({ path: databasePath, durability: "process-crash-safe", pollIntervalMs: 20 });
  const [flow] = (await loadAgentFlows(entryPath)).values();
  assert.ok(flow !== undefined);
  const worker = new Worker({ store, flows: [flow] });
  await worker.start();
  try {
    const sessions = new AgentSessionTestClient(new Client({ store }), flow);
    await sessions.start("export-session");
    await sessions.sendUserMessage("export-session", "Where is order 1001?");
    await sessions.waitForTurnCount("export-session", 1);
    await worker.close();
    const updatedBefore = (await new Client({ store }).describe("export-session")).updatedAt.getTime();

    const fixturePath = join(folder, "export-session.fixture.json");
    const exported = run(["--conditions=perdure-source", cliPath, "export", "export-session", "--db", databasePath, "--entry", entryPath, "--out", fixturePath]);
    assert.equal(exported.status, 0, exported.stderr);
    const fixture = JSON.parse(readFileSync(fixturePath, "utf8")) as SessionFixture;
    assert.equal(fixture.format, "perdure-session-fixture");
    assert.equal(fixture.flow_type, "RefundAgent");
    assert.deepEqual(fixture.turns.map((turn) => turn.user_messages), [["Where is order 1001?"]]);
    assert.equal(fixture.turns[0]?.model_calls.length, 3);
    assert.deepEqual(fixture.turns[0]?.tool_calls.map((call) => [call.tool_name, call.effect, call.status]), [["lookup_order", "read", "succeeded"], ["refund_order", "non_idempotent_write", "succeeded"]]);
    assert.equal((await new Client({ store }).describe("export-session")).updatedAt.getTime(), updatedBefore, "exporting never writes");

    const testPath = join(folder, "export-session.test.ts");
    const written = run(["--conditions=perdure-source", cliPath, "export", "export-session", "--as-test", "--db", databasePath, "--entry", entryPath, "--out", testPath]);
    assert.equal(written.status, 0, written.stderr);
    const passing = run(["--conditions=perdure-source", "--test", testPath]);
    assert.equal(passing.status, 0, `${passing.stdout}\n${passing.stderr}`);
    assert.match(passing.stdout, /pass 1/);

    // The recording says the agent described a tool otherwise: the test fails and says where.
    const testText = readFileSync(testPath, "utf8");
    writeFileSync(testPath, testText.replaceAll('"description": "Refund an order."', '"description": "Refund an order. (as it was)"'));
    const failing = run(["--conditions=perdure-source", "--test", testPath]);
    assert.equal(failing.status, 1);
    assert.match(failing.stdout, /turn-1, model call 1 \(RunModel\): the agent sent the model a different request/);
    assert.match(failing.stdout, /\(as it was\)/);

    // perdure inspect names a fork's source.
    await forkSession(new Client({ store }), flow, { sourceSessionId: "export-session", throughTurn: 1, sessionId: "export-fork" });
    const inspected = run(["--conditions=perdure-source", cliPath, "inspect", "export-fork", "--db", databasePath, "--entry", entryPath]);
    assert.equal(inspected.status, 0, inspected.stderr);
    assert.match(inspected.stdout, /\nforked from export-session after turn 1 \(6 messages inherited\)\n/);
    const source = run(["--conditions=perdure-source", cliPath, "inspect", "export-session", "--db", databasePath, "--entry", entryPath]);
    assert.equal(source.status, 0, source.stderr);
    assert.match(source.stdout, /\nforks: export-fork \(after turn 1\)\n/, "perdure inspect lists the source's forks");

    const missing = run(["--conditions=perdure-source", cliPath, "export", "no-such-session", "--db", databasePath, "--entry", entryPath]);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /^perdure: no session "no-such-session" in SQLite at .*dev\.db; perdure sessions lists them\n$/);
  } finally {
    await worker.close();
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  }
});
