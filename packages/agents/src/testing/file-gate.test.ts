import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { InvalidInputError } from "@perdure/engine";
import { FileGate } from "./file-gate.ts";

function temporaryDirectory(t: TestContext): string {
  const directory = mkdtempSync(join(tmpdir(), "perdure-file-gate-"));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

void test("a waiter is reported as reached and passes only once the gate opens", async (t) => {
  const directory = temporaryDirectory(t);
  const workerSide = new FileGate(directory, "before-charge");
  const testSide = new FileGate(directory, "before-charge");
  let isPast = false;
  const waiting = workerSide.waitUntilOpen().then(() => { isPast = true; });
  await testSide.waitUntilReached();
  assert.deepEqual(testSide.arrivals().map((arrival) => arrival.processId), [process.pid]);
  await delay(60);
  assert.equal(isPast, false, "the waiter must stay parked while the gate is closed");
  assert.equal(testSide.isOpen(), false);
  testSide.open();
  assert.equal(testSide.isOpen(), true);
  await waiting;
  assert.equal(isPast, true);
  await workerSide.waitUntilOpen();
  assert.equal(testSide.arrivals().length, 2, "a waiter at an open gate still counts as an arrival");
});

void test("waitUntilOpen rejects with the signal's reason when aborted", async (t) => {
  const gate = new FileGate(temporaryDirectory(t), "never-opened");
  const controller = new AbortController();
  const waiting = gate.waitUntilOpen({ signal: controller.signal });
  await gate.waitUntilReached();
  controller.abort(new Error("cancelled by the test"));
  await assert.rejects(waiting, /cancelled by the test/);
});

void test("waitUntilReached fails with an error naming the gate when nobody arrives in time", async (t) => {
  const directory = temporaryDirectory(t);
  const gate = new FileGate(directory, "lonely");
  await assert.rejects(gate.waitUntilReached({ timeoutMs: 50 }), /FileGate lonely in .* was reached 0 of 1 times within 50 ms/);
  assert.equal(existsSync(gate.reachedPath), false);
});

void test("waitUntilReached counts arrivals up to the asked count", async (t) => {
  const gate = new FileGate(temporaryDirectory(t), "counted");
  gate.open();
  await gate.waitUntilOpen();
  await assert.rejects(gate.waitUntilReached({ count: 2, timeoutMs: 30 }), /reached 1 of 2 times/);
  await gate.waitUntilOpen();
  await gate.waitUntilReached({ count: 2, timeoutMs: 1000 });
});

void test("a gate name that is not a plain file name is rejected", () => {
  for (const name of ["", "../escape", "a/b", ".hidden"]) {
    assert.throws(() => new FileGate(tmpdir(), name), InvalidInputError, name);
  }
});
