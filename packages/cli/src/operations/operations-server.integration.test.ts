/**
 * `perdure worker --metrics-port` as a real child process: `/metrics` after
 * a scripted session holds the Step counters the Step history implies, the
 * endpoints refuse foreign hosts, web pages and other methods, and
 * `/readyz` turns unready while PostgreSQL is cut off and ready again after.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { AgentSessionTestClient, findFreeLoopbackPorts, pollUntil } from "@perdure/agents/testing";
import { Client } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import { createTemporaryPostgresSchema, CuttableTcpProxy, postgresTestSkip, testDatabaseUrl } from "@perdure/engine/testing";
import { DevServerProcess, gatedEntryPath } from "../test-fixtures/dev-server-process.ts";
import { gatedSupportAgentFlow } from "../test-fixtures/gated-support-agent.ts";
import { WorkerCommandProcess } from "../test-fixtures/worker-command-process.ts";

/** A GET with exactly these headers (fetch would set Host itself). */
function get(url: string, headers: Record<string, string> = {}, method = "GET"): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method, headers }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => { body += chunk.toString(); });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
    request.end();
  });
}

async function metricsUrlOf(worker: WorkerCommandProcess): Promise<string> {
  let url: string | undefined;
  await pollUntil(() => {
    url = /metrics at (http:\/\/\S+)\/metrics/.exec(worker.output)?.[1];
    return url !== undefined;
  }, { timeoutMs: 10_000, description: "the metrics address" });
  return url ?? "";
}

/** Sample values by metric name and labels, from the Prometheus text format. */
function samplesOf(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  return text.split("\n").filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `)).map((line) => {
    const labels: Record<string, string> = {};
    const labelText = /\{(.*)\}/.exec(line)?.[1] ?? "";
    for (const match of labelText.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[match[1] ?? ""] = match[2] ?? "";
    return { labels, value: Number(line.slice(line.lastIndexOf(" ") + 1)) };
  });
}

void test("/metrics after a scripted session counts every Step method the history shows committed, and the endpoints refuse what they must", { timeout: 300_000 }, async (t) => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-metrics-"));
  const path = join(folder, "sessions.db");
  const store = SqliteStore.open({ path, durability: "process-crash-safe" });
  const worker = await WorkerCommandProcess.start({ gateDirectory: folder, args: ["--db", path, "--metrics-port", "0", "--concurrency", "4"] });
  t.after(async () => {
    await worker.stop();
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });
  const base = await metricsUrlOf(worker);
  const host = new URL(base).host;
  const client = new Client({ store });
  const sessions = new AgentSessionTestClient(client, gatedSupportAgentFlow);
  await sessions.startSession("metrics-1", { initialMessage: "where is order 1001?" });
  await sessions.waitForTurnCount("metrics-1", 1, { timeoutMs: 30_000 });

  // The Worker counts a commit when it lands, which may be a moment after the history shows it, and the
  // session may commit a Step more after its turn ended (its wait for the next message): read both again
  // until they agree.
  let expected = new Map<string, number>();
  await pollUntil(async () => {
    expected = new Map<string, number>();
    for (const entry of (await client.getStepHistory("metrics-1")).filter((each) => each.status === "completed")) {
      const key = `${entry.stepType} ${entry.method}`;
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }
    const scraped = await get(`${base}/metrics`, { host });
    const committed = new Map(samplesOf(scraped.body, "perdure_step_committed_total").map((sample) => [`${sample.labels.perdure_step_type} ${sample.labels.perdure_step_method}`, sample.value]));
    return [...expected].every(([key, count]) => committed.get(key) === count) && committed.size === expected.size;
  }, { timeoutMs: 60_000, description: "the committed counters to match the history" });
  assert.ok(expected.size >= 3, "the turn ran several Step types");
  const scraped = await get(`${base}/metrics`, { host });
  assert.equal(scraped.status, 200);
  const started = samplesOf(scraped.body, "perdure_step_started_total").reduce((sum, sample) => sum + sample.value, 0);
  assert.equal(started, [...expected.values()].reduce((sum, count) => sum + count, 0), "every started attempt committed");
  assert.deepEqual(samplesOf(scraped.body, "perdure_step_failed_total"), []);
  assert.deepEqual(samplesOf(scraped.body, "perdure_worker_slots_limit").map((sample) => sample.value), [4]);
  assert.ok(samplesOf(scraped.body, "perdure_step_duration_count").length > 0, "Step durations are recorded");
  assert.deepEqual(samplesOf(scraped.body, "perdure_queue_ready").map((sample) => sample.value), [0], "nothing is left to claim");
  // The session's own metrics: one turn, completed; one GenAI operation per RunModel attempt, with its output tokens.
  const total = (name: string, labels: Record<string, string> = {}): number =>
    samplesOf(scraped.body, name).filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels[key] === value)).reduce((sum, sample) => sum + sample.value, 0);
  const agent = { perdure_flow_type: gatedSupportAgentFlow.flowType };
  assert.equal(total("perdure_agent_turns_started_total", agent), 1);
  assert.equal(total("perdure_agent_turns_ended_total", { ...agent, perdure_agent_turn_outcome: "completed" }), 1);
  assert.equal(total("perdure_agent_turns_ended_total"), 1);
  assert.equal(total("perdure_agent_turn_duration_count", agent), 1);
  const modelCalls = expected.get("RunModel execute") ?? 0;
  assert.ok(modelCalls >= 1);
  assert.equal(total("gen_ai_client_operation_duration_count", { gen_ai_operation_name: "chat" }), modelCalls);
  assert.ok(total("gen_ai_client_token_usage_sum", { gen_ai_token_type: "output" }) > 0, "output tokens are recorded");

  assert.deepEqual(await get(`${base}/healthz`, { host }), { status: 200, body: "ok\n" });
  const ready = await get(`${base}/readyz`, { host });
  assert.equal(ready.status, 200, ready.body);
  assert.deepEqual(JSON.parse(ready.body), { ready: true, checks: { store: "ok", worker: "ok" } });
  assert.equal((await get(`${base}/metrics`, { host: "attacker.example:80" })).status, 421, "a rebinding page's Host is refused");
  assert.equal((await get(`${base}/metrics`, { host, origin: "http://attacker.example" })).status, 403, "a web page is refused");
  assert.equal((await get(`${base}/metrics`, { host }, "POST")).status, 405);
  assert.equal((await get(`${base}/admin`, { host })).status, 404);
  assert.equal((await get(`${base}/metrics?${"x".repeat(3000)}`, { host })).status, 414);
});

void test("perdure dev --metrics-port serves /metrics, /healthz and /readyz for its Worker", { timeout: 300_000 }, async (t) => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-dev-metrics-"));
  const [port] = await findFreeLoopbackPorts(1);
  const server = await DevServerProcess.start({ port: port ?? 0, databasePath: join(folder, "dev.db"), gateDirectory: folder, args: ["--metrics-port", "0"] });
  t.after(async () => {
    await server.kill();
    rmSync(folder, { recursive: true, force: true });
  });
  let base = "";
  await pollUntil(() => {
    base = /metrics at (http:\/\/\S+)\/metrics/.exec(server.log)?.[1] ?? "";
    return base !== "";
  }, { timeoutMs: 10_000, description: "the metrics address" });
  const host = new URL(base).host;
  assert.equal((await get(`${base}/healthz`, { host })).status, 200);
  assert.deepEqual(JSON.parse((await get(`${base}/readyz`, { host })).body), { ready: true, checks: { store: "ok", worker: "ok" } });
  const scraped = await get(`${base}/metrics`, { host });
  assert.equal(scraped.status, 200);
  assert.deepEqual(samplesOf(scraped.body, "perdure_worker_slots_limit").map((sample) => sample.value), [8]);
  // The session API answers the same probes, checking the dev server's own Worker.
  const apiHost = `127.0.0.1:${port ?? 0}`;
  assert.deepEqual(await get(`http://${apiHost}/api/healthz`, { host: apiHost }), { status: 200, body: "ok\n" });
  const apiReady = await get(`http://${apiHost}/api/readyz`, { host: apiHost });
  assert.equal(apiReady.status, 200, apiReady.body);
  assert.deepEqual(JSON.parse(apiReady.body), { ready: true, checks: { store: "ok", schema: "ok", worker: "ok" } });
});

void test("perdure worker refuses a non-loopback --metrics-host without a token", () => {
  const cliPath = fileURLToPath(new URL("../cli.ts", import.meta.url));
  const folder = mkdtempSync(join(tmpdir(), "perdure-metrics-"));
  try {
    const result = spawnSync(process.execPath, [cliPath, "worker", "--db", join(folder, "s.db"), "--metrics-port", "0", "--metrics-host", "0.0.0.0", gatedEntryPath], {
      encoding: "utf8", env: { ...process.env, PERDURE_DATABASE_URL: "", PERDURE_METRICS_TOKEN: "" }, timeout: 60_000,
    });
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, /--metrics-host 0.0.0.0 is not a loopback address: give --metrics-token/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

void test("postgres: /readyz turns unready while the store is unreachable and ready again once it is back; the Worker says so once each way", { skip: postgresTestSkip(testDatabaseUrl()), timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(testDatabaseUrl() ?? "");
  const databaseUrl = new URL(temporary.connectionString);
  const proxy = new CuttableTcpProxy({ host: databaseUrl.hostname, port: Number(databaseUrl.port || "5432") });
  await proxy.open();
  const folder = mkdtempSync(join(tmpdir(), "perdure-readyz-"));
  const viaProxy = new URL(temporary.connectionString);
  viaProxy.hostname = "127.0.0.1";
  viaProxy.port = String(proxy.port);
  viaProxy.searchParams.set("schema", temporary.schema);
  const worker = await WorkerCommandProcess.start({ gateDirectory: folder, args: ["--metrics-port", "0"], env: { PERDURE_DATABASE_URL: viaProxy.toString() } });
  t.after(async () => {
    await worker.stop();
    await proxy.cut();
    await temporary.dispose();
    rmSync(folder, { recursive: true, force: true });
  });
  const base = await metricsUrlOf(worker);
  const host = new URL(base).host;
  const readiness = async () => (await get(`${base}/readyz`, { host })).status;
  assert.equal(await readiness(), 200);
  await proxy.cut();
  await pollUntil(async () => await readiness() === 503, { timeoutMs: 30_000, description: "/readyz to turn unready" });
  const unready = JSON.parse((await get(`${base}/readyz`, { host })).body) as { ready: boolean; checks: Record<string, string> };
  assert.equal(unready.ready, false);
  assert.notEqual(unready.checks.store ?? unready.checks.readiness, "ok");
  assert.equal((await get(`${base}/healthz`, { host })).status, 200, "the process is alive all along");
  await pollUntil(() => /the store is unreachable/.test(worker.output), { timeoutMs: 30_000, description: `the Worker to say the store is unreachable:\n${worker.output}` });
  // Long enough for the Worker to retry several times: it must not say so again each time.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await proxy.open();
  await pollUntil(async () => await readiness() === 200, { timeoutMs: 30_000, description: "/readyz to turn ready again" });
  await pollUntil(() => /the store answers again after/.test(worker.output), { timeoutMs: 30_000, description: `the Worker to say the store is back:\n${worker.output}` });
  assert.equal(worker.output.match(/the store is unreachable/g)?.length, 1, `the outage is reported once:\n${worker.output}`);
});
