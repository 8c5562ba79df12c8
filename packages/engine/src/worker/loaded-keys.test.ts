/**
 * `loadedKeys` of an attempt (issue 40): the Snapshot indexes its map keys
 * once, and the attempt's context adds and removes its own staged writes.
 * The index must give what the old scan gave (every loaded instance with a
 * value, by map, in key order, plain Attributes left out), a caller that
 * changes the array it got must not change what the next call returns, and a
 * Step's staged writes and deletes must show in its next call.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { attribute, attributeMap } from "../attribute/attribute.ts";
import { defineFlow } from "../flow/flow.ts";
import { deadEnd } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { StoredLoad } from "../step/step-options.ts";
import { AttemptContext, type AttemptServices } from "./attempt-context.ts";
import { Snapshot } from "./snapshot.ts";

const orders = attributeMap<string>("Orders");
const tags = attributeMap<string>("Tags");
const total = attribute<number>("Total");
const Only = defineStep("Only", { execute: () => deadEnd() });
const flow = defineFlow({ type: "LoadedKeys", steps: [Only], persistence: { orders, tags, total } });

function snapshotOf(): Snapshot {
  const loads: StoredLoad[] = [
    { kind: "range", name: "Orders" },
    { kind: "instance", name: "Tags", key: "t2" },
    { kind: "instance", name: "Tags", key: "unset" },
    { kind: "instance", name: "Tags", key: "t1" },
  ];
  return Snapshot.ofLoaded(flow, [{ name: "Total", key: "", value: "3" }], loads, [
    [
      { name: "Orders", key: "c", value: JSON.stringify("third") },
      { name: "Orders", key: "a", value: JSON.stringify("first") },
      { name: "Orders", key: "b", value: JSON.stringify("second") },
    ],
    JSON.stringify("two"),
    undefined,
    JSON.stringify("one"),
  ]);
}

function contextOf(snapshot: Snapshot): AttemptContext {
  const services: AttemptServices = {
    flow,
    flowId: "f1",
    stepType: "Only",
    executionId: "e1",
    attempt: 1,
    deadline: new Date(Date.now() + 60_000),
    signal: new AbortController().signal,
    checkpoint: undefined,
    recoveryError: undefined,
    waitResult: undefined,
    maxValueBytes: 1_000_000,
    now: () => Date.now(),
    heartbeat: async () => undefined,
    writeStream: async () => undefined,
  };
  return new AttemptContext(snapshot, services);
}

test("a snapshot's loaded keys: each map's instances with values, in key order, without plain Attributes or unset instances", () => {
  const snapshot = snapshotOf();
  assert.deepEqual(snapshot.loadedKeys("Orders"), ["a", "b", "c"]);
  assert.deepEqual(snapshot.loadedKeys("Tags"), ["t1", "t2"]);
  assert.deepEqual(snapshot.loadedKeys("Total"), []);
  assert.deepEqual(snapshot.loadedKeys("Unknown"), []);
});

test("the array loadedKeys returns is the caller's: changing it changes neither the snapshot's next answer nor the context's", () => {
  const snapshot = snapshotOf();
  const first = snapshot.loadedKeys("Orders");
  first.push("z");
  first.reverse();
  assert.deepEqual(snapshot.loadedKeys("Orders"), ["a", "b", "c"]);
  const context = contextOf(snapshot);
  const fromContext = context.loadedKeys(orders);
  fromContext.splice(0, fromContext.length);
  assert.deepEqual(context.loadedKeys(orders), ["a", "b", "c"]);
});

test("an attempt's loaded keys follow its staged writes and deletes, map by map, and only that map's", () => {
  const context = contextOf(snapshotOf());
  assert.deepEqual(context.loadedKeys(orders), ["a", "b", "c"]);
  context.write(orders.instance("bb"), "between");
  context.write(orders.instance("a"), null);
  context.write(total, 4);
  assert.deepEqual(context.loadedKeys(orders), ["b", "bb", "c"]);
  // A write to another map or to a plain Attribute leaves this map's keys as loaded.
  assert.deepEqual(context.loadedKeys(tags), ["t1", "t2"]);
  context.write(tags.instance("t0"), "zero");
  assert.deepEqual(context.loadedKeys(tags), ["t0", "t1", "t2"]);
  // Writing a deleted key again brings it back; deleting a new key takes it away.
  context.write(orders.instance("a"), "again");
  context.write(orders.instance("bb"), null);
  assert.deepEqual(context.loadedKeys(orders), ["a", "b", "c"]);
  assert.equal(context.read(orders.instance("a")), "again");
});
