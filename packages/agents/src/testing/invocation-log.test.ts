import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { InvocationLog } from "./invocation-log.ts";

function temporaryLogPath(t: TestContext): string {
  const directory = mkdtempSync(join(tmpdir(), "perdure-invocation-log-"));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  return join(directory, "nested", "invocations.log");
}

void test("an empty log has no entries", (t) => {
  const log = new InvocationLog(temporaryLogPath(t));
  assert.deepEqual(log.entries(), []);
  assert.equal(log.count("charge_card"), 0);
});

void test("every record is one entry, counted by name, readable by another instance", (t) => {
  const path = temporaryLogPath(t);
  const writer = new InvocationLog(path);
  writer.record("charge_card", { amount: 12 });
  writer.record("send_email");
  writer.record("charge_card", { amount: 30 });
  const reader = new InvocationLog(path);
  assert.equal(reader.count("charge_card"), 2);
  assert.equal(reader.count("send_email"), 1);
  assert.equal(reader.count("refund"), 0);
  const entries = reader.entries();
  assert.deepEqual(entries.map((entry) => [entry.name, entry.details, entry.processId]), [
    ["charge_card", { amount: 12 }, process.pid],
    ["send_email", undefined, process.pid],
    ["charge_card", { amount: 30 }, process.pid],
  ]);
  assert.equal("details" in entries[1]!, false);
});

void test("a line cut off without its newline does not count", (t) => {
  const path = temporaryLogPath(t);
  const log = new InvocationLog(path);
  log.record("charge_card");
  appendFileSync(path, '{"name":"charge_card","proc');
  assert.equal(log.count("charge_card"), 1);
});
