/**
 * `/healthz` and `/readyz` of the session HTTP handler: ready while the
 * store answers and the attached Worker claims; unready, naming the failed
 * check and nothing more, when the Worker stops or PostgreSQL is cut off
 * behind a TCP proxy; ready again once it is back. The reason is logged once.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client, Worker, type LogFields, type PerdureLogger } from "@perdure/engine";
import { PostgresStore } from "@perdure/engine/postgres";
import { createTemporaryPostgresSchema, createTemporarySqliteStore, CuttableTcpProxy, pollUntil, postgresTestSkip, testDatabaseUrl } from "@perdure/engine/testing";
import { createAgentHttpHandler } from "./create-agent-http-handler.ts";
import { createSupportFlow } from "./test-fixtures/http-harness.ts";

/** A logger that keeps its entries. */
class RecordingLogger implements PerdureLogger {
  readonly entries: Array<{ level: string; fields: LogFields; message: string }> = [];
  debug(fields: LogFields, message: string): void { this.entries.push({ level: "debug", fields, message }); }
  info(fields: LogFields, message: string): void { this.entries.push({ level: "info", fields, message }); }
  warn(fields: LogFields, message: string): void { this.entries.push({ level: "warn", fields, message }); }
  error(fields: LogFields, message: string): void { this.entries.push({ level: "error", fields, message }); }
}

async function probe(handler: (request: Request) => Promise<Response>, path: string): Promise<{ status: number; body: string }> {
  const response = await handler(new Request(`http://app.test/api${path}`));
  return { status: response.status, body: await response.text() };
}

test("/healthz answers while the process runs; /readyz is ready while the store answers and the Worker claims, and unready once the Worker closes", async () => {
  const temporary = createTemporarySqliteStore();
  const flow = createSupportFlow();
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
  await worker.start();
  const logger = new RecordingLogger();
  const handler = createAgentHttpHandler({ client: new Client({ store: temporary.store }), flows: [flow], basePath: "/api", authorize: () => new Response(null, { status: 401 }), readiness: { worker }, logger });
  try {
    assert.deepEqual(await probe(handler, "/healthz"), { status: 200, body: "ok\n" });
    const ready = await probe(handler, "/readyz");
    assert.equal(ready.status, 200, ready.body);
    assert.deepEqual(JSON.parse(ready.body), { ready: true, checks: { store: "ok", schema: "ok", worker: "ok" } });
    await worker.close();
    const closed = await probe(handler, "/readyz");
    assert.equal(closed.status, 503);
    assert.deepEqual(JSON.parse(closed.body), { ready: false, checks: { store: "ok", schema: "ok", worker: "not claiming" } });
    await probe(handler, "/readyz");
    assert.deepEqual(logger.entries.map((entry) => [entry.level, entry.message]), [["error", "not ready"]], "a change is logged once");
  } finally {
    await worker.close();
    await temporary.dispose();
  }
});

test("readiness options that are not a Worker are refused, naming the value", () => {
  const temporary = createTemporarySqliteStore();
  try {
    assert.throws(() => createAgentHttpHandler({ client: new Client({ store: temporary.store }), flows: [createSupportFlow()], authorize: () => ({ principal: "p" }), readiness: { worker: { claiming: true } as never } }), /readiness\.worker .* is invalid: pass the Worker/);
  } finally {
    void temporary.dispose();
  }
});

test("postgres: /readyz turns unready while the store is cut off behind a proxy and ready again once it is back, without saying why to the caller", { skip: postgresTestSkip(testDatabaseUrl()), timeout: 300_000 }, async () => {
  const temporary = createTemporaryPostgresSchema(testDatabaseUrl() ?? "");
  const direct = new URL(temporary.connectionString);
  const proxy = new CuttableTcpProxy({ host: direct.hostname, port: Number(direct.port || "5432") });
  await proxy.open();
  const viaProxy = new URL(temporary.connectionString);
  viaProxy.hostname = "127.0.0.1";
  viaProxy.port = String(proxy.port);
  const store = await PostgresStore.open({ connectionString: viaProxy.toString(), schema: temporary.schema, connectTimeoutMs: 1000, onError: () => undefined });
  const logger = new RecordingLogger();
  const handler = createAgentHttpHandler({ client: new Client({ store }), flows: [createSupportFlow()], basePath: "/api", authorize: () => new Response(null, { status: 401 }), logger });
  try {
    assert.equal((await probe(handler, "/readyz")).status, 200);
    await proxy.cut();
    const unready = await pollUntil(async () => {
      const answer = await probe(handler, "/readyz");
      return answer.status === 503 ? answer : undefined;
    }, { timeoutMs: 30_000, description: "/readyz to turn unready" });
    assert.deepEqual(JSON.parse(unready.body), { ready: false, checks: { store: "unreachable", schema: "unknown" } });
    assert.ok(!unready.body.includes(String(proxy.port)) && !unready.body.includes("ECONNREFUSED"), "the caller learns which check failed, not the database's address");
    assert.equal((await probe(handler, "/healthz")).status, 200, "the process is alive all along");
    await proxy.open();
    await pollUntil(async () => (await probe(handler, "/readyz")).status === 200, { timeoutMs: 30_000, description: "/readyz to turn ready again" });
    assert.deepEqual(logger.entries.map((entry) => [entry.level, entry.message]), [["error", "not ready"], ["info", "ready again"]]);
    assert.ok(logger.entries[0]?.fields.err !== undefined, "the log has the reason");
  } finally {
    await store.close();
    await proxy.cut();
    await temporary.dispose();
  }
});
