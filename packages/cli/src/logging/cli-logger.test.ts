import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { Client, defineFlow, defineStep, completeFlow, Worker } from "@perdure/engine";
import { createTemporarySqliteStore, pollUntil } from "@perdure/engine/testing";
import { createCliLogger } from "./cli-logger.ts";
import type { LogFormat } from "./log-format.ts";

function capture(format: LogFormat, name = "perdure worker") {
  const destination = new PassThrough();
  let text = "";
  destination.on("data", (chunk: Buffer) => { text += chunk.toString("utf8"); });
  return { logger: createCliLogger({ name, format, destination }), text: () => text };
}

async function runFailingFlow(logger: ReturnType<typeof createCliLogger>): Promise<void> {
  const temporary = createTemporarySqliteStore();
  const Flaky = defineStep("Flaky", {
    executeOptions: { retry: { initialIntervalMs: 10, backoffCoefficient: 1, maximumAttempts: 2 } },
    execute: (context) => {
      if (context.attempt === 1) throw new TypeError("could not reach postgres://app:hunter2@db.internal/app (Authorization: Bearer sk-live-123)");
      return completeFlow("ok");
    },
  });
  const flow = defineFlow({ type: "Logged", start: "Flaky", steps: [Flaky] });
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20, logger });
  await worker.start();
  try {
    const client = new Client({ store: temporary.store });
    await client.start(flow, "logged-1");
    assert.equal((await client.waitForFlow("logged-1", { timeoutMs: 10_000 })).status, "completed");
  } finally {
    await worker.close();
    await temporary.dispose();
  }
}

test("in JSON lines, a Worker's failed attempt is one entry with the flow, the Step, the attempt and the error's stack, and no secret", async () => {
  const { logger, text } = capture("json");
  await runFailingFlow(logger);
  await pollUntil(() => text().includes("attempt 1 failed") ? true : undefined, { timeoutMs: 5000, description: "the failed attempt's entry" });
  const entries = text().trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
  const failed = entries.filter((entry) => entry.stepType === "Flaky");
  assert.equal(failed.length, 1, text());
  const [entry] = failed as [Record<string, unknown> & { err: { type: string; message: string; stack: string } }];
  assert.equal(entry.level, "error");
  assert.equal(entry.name, "perdure worker");
  assert.equal(entry.flowId, "logged-1");
  assert.equal(entry.flowType, "Logged");
  assert.equal(entry.method, "execute");
  assert.equal(entry.attempt, 1);
  assert.equal(typeof entry.executionId, "string");
  assert.equal(entry.msg, `session logged-1 (Logged): Flaky attempt 1 failed (execution ${String(entry.executionId)})`);
  assert.equal(entry.err.type, "TypeError");
  assert.match(entry.err.stack, /\n\s+at /, "the stack is kept");
  assert.equal(entry.err.message, "could not reach postgres://app:[redacted]@db.internal/app (Authorization: [redacted])");
  assert.ok(!text().includes("hunter2") && !text().includes("sk-live-123"), "no secret reaches the log");
});

test("authorization headers, cookies and database URLs in log fields and messages are redacted in both formats", () => {
  for (const format of ["json", "pretty"] as const) {
    const { logger, text } = capture(format, "perdure dev");
    logger.warn({ request: { headers: { authorization: "Bearer tok-1", cookie: "sid=abc", "user-agent": "curl" } }, databaseUrl: "postgres://u:pw-2@h/db" }, "refused a request for postgres://u:pw-3@h/db");
    logger.error({ err: new Error("login failed: password=pw-4") }, "store error");
    for (const secret of ["tok-1", "sid=abc", "pw-2", "pw-3", "pw-4"]) assert.ok(!text().includes(secret), `${format}: ${secret} is not logged: ${text()}`);
    assert.ok(text().includes("refused a request for postgres://u:[redacted]@h/db"), text());
  }
});

test("the pretty format is the name, the message and the error, then the stack frames indented", () => {
  const { logger, text } = capture("pretty", "perdure dev");
  const error = new Error("the model provider is down");
  logger.error({ err: error, flowId: "s1" }, "session s1 (Agent): RunModel attempt 2 failed (execution 4)");
  logger.info({}, "the store answers again after 1.2 s");
  const [headline, firstFrame] = text().split("\n");
  assert.equal(headline, "perdure dev: session s1 (Agent): RunModel attempt 2 failed (execution 4): Error: the model provider is down");
  assert.match(firstFrame ?? "", /^ {4}at /);
  assert.ok(text().includes("\nperdure dev: the store answers again after 1.2 s\n"));
});
