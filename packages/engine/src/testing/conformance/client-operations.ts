import assert from "node:assert/strict";
import { it } from "node:test";
import { attribute, attributeMap } from "../../attribute/attribute.ts";
import { channel } from "../../channel/channel.ts";
import { FlowAlreadyExistsError } from "../../errors/flow-already-exists-error.ts";
import { FlowNotRunningError } from "../../errors/flow-not-running-error.ts";
import { InvalidInputError } from "../../errors/invalid-input-error.ts";
import { defineFlow } from "../../flow/flow.ts";
import { rpc } from "../../rpc/rpc.ts";
import { deadEnd, moveTo } from "../../step/decision.ts";
import { defineStep } from "../../step/step.ts";
import { received } from "../../condition/condition.ts";
import { pollUntil } from "../poll-until.ts";
import { startEnvironment, waitForExecution, type StoreConformanceOptions } from "./harness.ts";

export function clientTests(options: StoreConformanceOptions): void {
  const inbox = channel<string>("Inbox");
  const count = attribute<number>("Count");
  const Listen = defineStep("Listen", {
    waitUntil: () => received(inbox),
    execute: (context) => {
      context.write(count, (context.read(count) ?? 0) + 1);
      return moveTo("Listen");
    },
  });
  const flow = defineFlow({
    type: "Listener",
    start: "Listen",
    steps: [Listen],
    persistence: { inbox, count },
    historyRetention: 10,
    parseInput: (raw) => {
      if (raw !== null && typeof raw !== "object") throw new Error(`expected an object, got ${JSON.stringify(raw)}`);
      return raw;
    },
    rpcs: {
      push: rpc<string, string>({ name: "push", handler: (context, text) => context.publish(inbox, text) }),
      restart: rpc({ name: "restart", handler: (context) => { context.moveTo("Listen"); return null; } }),
    },
  });

  it("start is idempotent per flow ID and request ID; another request ID is refused", async () => {
    const environment = await startEnvironment(options, [flow], false);
    try {
      assert.deepEqual(await environment.client.start(flow, "start-1", {}, { requestId: "r1" }), { created: true });
      assert.deepEqual(await environment.client.start(flow, "start-1", {}, { requestId: "r1" }), { created: false });
      await assert.rejects(environment.client.start(flow, "start-1", {}, { requestId: "r2" }), (error: unknown) =>
        FlowAlreadyExistsError.isInstance(error) && error.message.includes("start-1"));
      await assert.rejects(environment.client.start(flow, "start-1"), FlowAlreadyExistsError);
      assert.equal((await environment.client.describe("start-1")).executions.length, 1);
      await assert.rejects(environment.client.start(flow, "start-2", 5), (error: unknown) =>
        InvalidInputError.isInstance(error) && /start input of Flow Listener start-2 is invalid: expected an object, got 5/.test(error.message));
      await assert.rejects(environment.client.describe("start-2"), /no Flow has ID "start-2"/);
    } finally {
      await environment.dispose();
    }
  });

  it("a start with attributes commits them with the Flow, so its start Step reads them; a foreign or empty one is refused and starts nothing", async () => {
    const seen = attribute<number>("Seen");
    const notes = attributeMap<string>("Notes");
    const Begin = defineStep("Begin", {
      load: [notes.all()],
      execute: (context) => {
        context.write(seen, (context.read(seen) ?? 0) + (context.read(notes.instance("a")) === "kept" ? 100 : 1));
        return deadEnd();
      },
    });
    const seeded = defineFlow({ type: "Seeded", start: "Begin", steps: [Begin], persistence: { seen, notes } });
    const environment = await startEnvironment(options, [seeded]);
    try {
      await environment.client.start(seeded, "seeded-1", {}, { attributes: [{ ref: seen, value: 5 }, { ref: notes.instance("a"), value: "kept" }] });
      await pollUntil(async () => (await environment.client.getAttributes("seeded-1", seen))[0] === 105, { description: "the start Step to read its start attributes" });
      const view = await environment.client.readFlowState("seeded-1", async (reader) => ({ seen: await reader.get(seen), notes: await reader.list(notes) }));
      assert.deepEqual(view, { seen: 105, notes: [{ key: "a", value: "kept" }] });
      await assert.rejects(environment.client.start(seeded, "seeded-2", {}, { attributes: [{ ref: count, value: 1 }] }), (error: unknown) =>
        InvalidInputError.isInstance(error) && error.message.includes('"Count", which is no Attribute or AttributeMap of Flow type Seeded'));
      await assert.rejects(environment.client.start(seeded, "seeded-2", {}, { attributes: [{ ref: seen, value: null }] }), /start attribute Seen of Flow seeded-2 has no value/);
      await assert.rejects(environment.client.describe("seeded-2"), /no Flow has ID "seeded-2"/);
    } finally {
      await environment.dispose();
    }
  });

  it("stop cancels every execution, and a stopped Flow refuses new movements", async () => {
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "stop-1", {});
      await waitForExecution(environment.client, "stop-1", "Listen", "waiting");
      await environment.client.stop("stop-1");
      const description = await environment.client.describe("stop-1");
      assert.equal(description.status, "stopped");
      assert.deepEqual(description.executions, []);
      await assert.rejects(environment.client.invokeRPC(flow.restart, "stop-1"), FlowNotRunningError);
      // The agents contract's names for the same calls.
      assert.deepEqual(await environment.client.startFlow(flow, "stop-2", {}), { created: true });
      await environment.client.stopFlow("stop-2", "stopped by the contract's name");
      assert.equal((await environment.client.describe("stop-2")).error, "stopped by the contract's name");
      assert.equal(typeof (await environment.client.invokeRPC(flow.push, "stop-1", "still accepted")), "string");
    } finally {
      await environment.dispose();
    }
  });

  it("lists Flows by type and status, and keeps a bounded Step history per Flow", async () => {
    const environment = await startEnvironment(options, [flow]);
    try {
      for (const id of ["list-a", "list-b", "list-c"]) await environment.client.start(flow, id, {});
      await environment.client.stop("list-b");
      const running = await environment.client.listFlows({ flowType: "Listener", status: "running" });
      assert.deepEqual(running.map((entry) => entry.flowId), ["list-a", "list-c"]);
      const page = await environment.client.listFlows({ limit: 2 });
      assert.deepEqual(page.map((entry) => entry.flowId), ["list-a", "list-b"]);
      const next = await environment.client.listFlows({ afterFlowId: "list-b" });
      assert.deepEqual(next.map((entry) => entry.flowId), ["list-c"]);
      for (let index = 0; index < 40; index += 1) await environment.client.invokeRPC(flow.push, "list-a", `m${index}`);
      await pollUntil(async () => (await environment.client.getAttributes("list-a", count))[0] === 40, { timeoutMs: 20_000 });
      const history = await environment.client.getStepHistory("list-a");
      assert.ok(history.length >= 10 && history.length < 80, `history keeps about 10 entries, got ${history.length}`);
      assert.equal(history.at(-1)?.stepType, "Listen");
      void deadEnd;
    } finally {
      await environment.dispose();
    }
  });
}
