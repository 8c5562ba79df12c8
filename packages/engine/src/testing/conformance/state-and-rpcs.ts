import assert from "node:assert/strict";
import { it } from "node:test";
import { attribute, attributeMap } from "../../attribute/attribute.ts";
import { channel } from "../../channel/channel.ts";
import { ChannelMessageNotFoundError } from "../../errors/channel-message-not-found-error.ts";
import { FlowNotFoundError } from "../../errors/flow-not-found-error.ts";
import { InvalidInputError } from "../../errors/invalid-input-error.ts";
import { RpcLockConflictError } from "../../errors/rpc-lock-conflict-error.ts";
import { UnloadedStateError } from "../../errors/unloaded-state-error.ts";
import { ValueTooLargeError } from "../../errors/value-too-large-error.ts";
import { defineFlow } from "../../flow/flow.ts";
import { rpc } from "../../rpc/rpc.ts";
import { deadEnd, moveTo } from "../../step/decision.ts";
import { defineStep } from "../../step/step.ts";
import { received } from "../../condition/condition.ts";
import { pollUntil } from "../poll-until.ts";
import { deferred, startEnvironment, waitForExecution, type StoreConformanceOptions } from "./harness.ts";

export function stateAndRpcTests(options: StoreConformanceOptions): void {
  it("a Step sees the snapshot taken at dispatch plus its own writes, not later commits", async () => {
    const value = attribute<number>("Value");
    const seen = attribute<number[]>("Seen");
    const gate = deferred();
    const started = deferred();
    const Reader = defineStep("Reader", {
      execute: async (context) => {
        const before = context.read(value) ?? -1;
        started.resolve();
        await gate.promise;
        const after = context.read(value) ?? -1;
        context.write(value, 100);
        context.write(seen, [before, after, context.read(value) ?? -1]);
        return deadEnd();
      },
    });
    const flow = defineFlow({
      type: "Snapshots",
      steps: [Reader],
      persistence: { value, seen },
      rpcs: {
        set: rpc<number, null>({ name: "set", handler: async (context, input) => { await context.write(value, input); return null; } }),
        read: rpc({ name: "read", handler: (context) => context.moveTo("Reader") }),
      },
    });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "snap-1");
      await environment.client.invokeRPC(flow.set, "snap-1", 1);
      await environment.client.invokeRPC(flow.read, "snap-1");
      await started.promise;
      await environment.client.invokeRPC(flow.set, "snap-1", 2);
      gate.resolve();
      const [result] = await pollUntil(async () => {
        const found = await environment.client.getAttributes("snap-1", seen);
        return found[0] === undefined ? undefined : found;
      });
      assert.deepEqual(result, [1, 1, 100]);
      assert.deepEqual(await environment.client.getAttributes("snap-1", value), [100]);
    } finally {
      await environment.dispose();
    }
  });

  it("loads only the selected map instances and Channels; reading others throws UnloadedStateError", async () => {
    const orders = attributeMap<string>("Orders");
    const inbox = channel<string>("Inbox");
    const report = attribute<string>("Report");
    const Inspect = defineStep<{ key: string }>("Inspect", {
      load: (input) => [orders.instance(input.key), inbox],
      execute: (context, input) => {
        const parts = [context.read(orders.instance(input.key)) ?? "missing", String(context.pendingMessages(inbox).length)];
        try {
          context.read(orders.instance("other"));
          parts.push("other loaded");
        } catch (error) {
          parts.push(UnloadedStateError.isInstance(error) ? "other unloaded" : "wrong error");
        }
        context.write(report, parts.join(","));
        return deadEnd();
      },
    });
    const Range = defineStep("Range", {
      load: [orders.all({ fromKey: "b" })],
      execute: (context) => {
        context.write(report, context.loadedKeys(orders).join(","));
        return deadEnd();
      },
    });
    const flow = defineFlow({
      type: "Loads",
      steps: [Inspect, Range],
      persistence: { orders, inbox, report },
      rpcs: {
        seed: rpc({
          name: "seed",
          handler: async (context) => {
            for (const key of ["a", "b", "c", "other"]) await context.write(orders.instance(key), `order ${key}`);
            await context.publish(inbox, "hello");
            return null;
          },
        }),
        inspect: rpc<string, null>({ name: "inspect", handler: (context, key) => { context.moveTo("Inspect", { key }); return null; } }),
        range: rpc({ name: "range", handler: (context) => { context.moveTo("Range"); return null; } }),
      },
    });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "loads-1");
      await environment.client.invokeRPC(flow.seed, "loads-1");
      await environment.client.invokeRPC(flow.inspect, "loads-1", "b");
      await pollUntil(async () => (await environment.client.getAttributes("loads-1", report))[0] === "order b,1,other unloaded");
      await environment.client.invokeRPC(flow.range, "loads-1");
      await pollUntil(async () => (await environment.client.getAttributes("loads-1", report))[0] === "b,c,other");
    } finally {
      await environment.dispose();
    }
  });

  it("waitUntilLoad: the wait loads only its own selection, execute the Step's load", async () => {
    const orders = attributeMap<string>("Orders");
    const inbox = channel<string>("Inbox");
    const report = attribute<string>("Report");
    const seenByWait: string[] = [];
    const describeOrder = (read: () => string | undefined): string => {
      try {
        return read() ?? "missing";
      } catch (error) {
        return UnloadedStateError.isInstance(error) ? "unloaded" : "wrong error";
      }
    };
    const Gate = defineStep("Gate", {
      load: [orders.instance("a")],
      waitUntilLoad: [],
      waitUntil: (context) => {
        seenByWait.push(describeOrder(() => context.read(orders.instance("a"))));
        return received(inbox);
      },
      execute: (context) => {
        context.write(report, `${describeOrder(() => context.read(orders.instance("a")))},${context.consumed(inbox).length}`);
        return deadEnd();
      },
    });
    const flow = defineFlow({
      type: "WaitLoads",
      steps: [Gate],
      persistence: { orders, inbox, report },
      rpcs: {
        seed: rpc({ name: "seed", handler: async (context) => { await context.write(orders.instance("a"), "order a"); context.moveTo("Gate"); return null; } }),
        send: rpc({ name: "send", handler: async (context) => { await context.publish(inbox, "go"); return null; } }),
      },
    });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "wait-loads-1");
      await environment.client.invokeRPC(flow.seed, "wait-loads-1");
      await pollUntil(() => seenByWait.length > 0);
      await environment.client.invokeRPC(flow.send, "wait-loads-1");
      await pollUntil(async () => (await environment.client.getAttributes("wait-loads-1", report))[0] === "order a,1");
      assert.deepEqual([...new Set(seenByWait)], ["unloaded"]);
    } finally {
      await environment.dispose();
    }
    assert.throws(() => defineStep("Lonely", { waitUntilLoad: [], execute: () => deadEnd() }), { name: "InvalidDefinitionError", message: /Step Lonely waitUntilLoad needs a waitUntil function/ });
  });

  it("a load function that selects nothing on the plain Attributes reads nothing after the claim; one that throws fails the attempt", async () => {
    const orders = attributeMap<string>("Orders");
    const mode = attribute<string>("Mode");
    const report = attribute<string>("Report");
    const failure = attribute<string>("Failure");
    const Pick = defineStep("Pick", {
      load: (_input, attributes) => {
        const chosen = attributes.read(mode);
        if (chosen === "throw") throw new Error("no selection for mode throw");
        return chosen === "all" ? [orders.all()] : [];
      },
      failureRoute: "Failed",
      executeOptions: { retry: { maximumAttempts: 1 } },
      execute: (context) => {
        let seen: string;
        try {
          seen = context.read(orders.instance("a")) ?? "missing";
        } catch (error) {
          seen = UnloadedStateError.isInstance(error) ? "unloaded" : "wrong error";
        }
        context.write(report, `${context.read(mode) ?? "none"}:${seen}`);
        return deadEnd();
      },
    });
    const Failed = defineStep("Failed", {
      execute: (context) => {
        context.write(failure, context.recoveryError?.message ?? "no recovery error");
        return deadEnd();
      },
    });
    const flow = defineFlow({
      type: "LoadNothing",
      steps: [Pick, Failed],
      persistence: { orders, mode, report, failure },
      rpcs: {
        seed: rpc({ name: "seed", handler: async (context) => { await context.write(orders.instance("a"), "order a"); return null; } }),
        pick: rpc<string, null>({ name: "pick", handler: async (context, chosen) => { await context.write(mode, chosen); context.moveTo("Pick"); return null; } }),
      },
    });
    const environment = await startEnvironment(options, [flow], false);
    // A store that reads a claimed Step's selection after the claim does it here (see OneRequestOperations.readSelection).
    const readsAfterClaims: string[] = [];
    const oneRequest = environment.store.oneRequest;
    const readSelection = oneRequest?.readSelection?.bind(oneRequest);
    if (oneRequest !== undefined && readSelection !== undefined) {
      Object.defineProperty(oneRequest, "readSelection", {
        configurable: true,
        value: (flowId: string, loads: Parameters<typeof readSelection>[1]) => {
          readsAfterClaims.push(`${flowId}:${loads.length}`);
          return readSelection(flowId, loads);
        },
      });
    }
    try {
      await environment.startWorker();
      await environment.client.start(flow, "load-nothing-1");
      await environment.client.invokeRPC(flow.seed, "load-nothing-1");
      await environment.client.invokeRPC(flow.pick, "load-nothing-1", "none");
      await pollUntil(async () => (await environment.client.getAttributes("load-nothing-1", report))[0] === "none:unloaded");
      assert.deepEqual(readsAfterClaims, [], "an empty selection reads nothing after the claim");
      await environment.client.invokeRPC(flow.pick, "load-nothing-1", "all");
      await pollUntil(async () => (await environment.client.getAttributes("load-nothing-1", report))[0] === "all:order a");
      await environment.client.invokeRPC(flow.pick, "load-nothing-1", "throw");
      await pollUntil(async () => (await environment.client.getAttributes("load-nothing-1", failure))[0] === "no selection for mode throw");
      assert.deepEqual(await environment.client.getAttributes("load-nothing-1", report), ["all:order a"]);
    } finally {
      await environment.dispose();
    }
  });

  it("an RPC that throws commits nothing", async () => {
    const value = attribute<number>("Value");
    const inbox = channel<string>("Inbox");
    const flow = defineFlow({
      type: "RpcRollback",
      steps: [defineStep("Never", { execute: () => deadEnd() })],
      persistence: { value, inbox },
      rpcs: {
        breakHalfway: rpc({
          name: "break_halfway",
          handler: async (context) => {
            await context.write(value, 7);
            await context.publish(inbox, "lost");
            context.moveTo("Never");
            throw new Error("refused");
          },
        }),
        pending: rpc({ name: "pending", handler: async (context) => (await context.listMessages(inbox)).length }),
      },
    });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "rollback-1");
      await assert.rejects(environment.client.invokeRPC(flow.breakHalfway, "rollback-1"), /refused/);
      assert.deepEqual(await environment.client.getAttributes("rollback-1", value), [undefined]);
      assert.equal(await environment.client.invokeRPC(flow.pending, "rollback-1"), 0);
      assert.deepEqual((await environment.client.describe("rollback-1")).executions, []);
    } finally {
      await environment.dispose();
    }
  });

  it("RPCs list pending messages and delete one by ID; a gone message raises ChannelMessageNotFoundError", async () => {
    const inbox = channel<string>("Inbox");
    const flow = defineFlow({
      type: "Deletes",
      steps: [],
      persistence: { inbox },
      rpcs: {
        push: rpc<string, string>({ name: "push", handler: (context, text) => context.publish(inbox, text) }),
        list: rpc({ name: "list", handler: async (context) => (await context.listMessages(inbox)).map((message) => message.message) }),
        remove: rpc<string, null>({ name: "remove", handler: async (context, id) => { await context.deleteMessage(inbox, id); return null; } }),
      },
    });
    const environment = await startEnvironment(options, [flow], false);
    try {
      await environment.client.start(flow, "deletes-1");
      const first = await environment.client.invokeRPC(flow.push, "deletes-1", "one");
      const second = await environment.client.invokeRPC(flow.push, "deletes-1", "two");
      const more: string[] = [];
      for (let index = 0; index < 12; index += 1) more.push(await environment.client.invokeRPC(flow.push, "deletes-1", `more ${index}`));
      const ids = [first, second, ...more];
      assert.deepEqual([...ids].sort(), ids, "message IDs sort as strings in publish order");
      for (const id of more) await environment.client.invokeRPC(flow.remove, "deletes-1", id);
      await environment.client.invokeRPC(flow.remove, "deletes-1", first);
      assert.deepEqual(await environment.client.invokeRPC(flow.list, "deletes-1"), ["two"]);
      await assert.rejects(environment.client.invokeRPC(flow.remove, "deletes-1", first), (error: unknown) =>
        ChannelMessageNotFoundError.isInstance(error) && error.message.includes(first));
      assert.deepEqual(await environment.client.invokeRPC(flow.list, "deletes-1"), ["two"]);
    } finally {
      await environment.dispose();
    }
  });

  it("an RPC needing a lock a running Step holds fails fast with RpcLockConflictError; the Step waits for locks too", async () => {
    const guarded = attribute<number>("Guarded");
    const gate = deferred();
    const holding = deferred();
    const Hold = defineStep("Hold", {
      executeOptions: { locks: [guarded] },
      execute: async (context) => {
        holding.resolve();
        await gate.promise;
        context.write(guarded, (context.read(guarded) ?? 0) + 1);
        return deadEnd();
      },
    });
    const flow = defineFlow({
      type: "Locks",
      start: "Hold",
      steps: [Hold],
      persistence: { guarded },
      rpcs: {
        bump: rpc({ name: "bump", locks: [guarded], handler: async (context) => { await context.write(guarded, 10); return null; } }),
        again: rpc({ name: "again", handler: (context) => { context.moveTo("Hold"); context.moveTo("Hold"); return null; } }),
      },
    });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "locks-1");
      await holding.promise;
      await assert.rejects(environment.client.invokeRPC(flow.bump, "locks-1"), (error: unknown) =>
        RpcLockConflictError.isInstance(error) && error.message.includes("Guarded"));
      gate.resolve();
      await pollUntil(async () => (await environment.client.getAttributes("locks-1", guarded))[0] === 1);
      await pollUntil(async () => (await environment.client.describe("locks-1")).executions.length === 0);
      await environment.client.invokeRPC(flow.bump, "locks-1");
      // Two executions needing the same lock run one after the other, so both increments land.
      await environment.client.invokeRPC(flow.again, "locks-1");
      await pollUntil(async () => (await environment.client.getAttributes("locks-1", guarded))[0] === 12);
    } finally {
      await environment.dispose();
    }
  });

  it("invokeRPC with lockConflictRetryMs calls again until the Step releases its lock, and gives up with the conflict when the time is up or the signal aborts", async () => {
    const guarded = attribute<number>("Guarded");
    const gate = deferred();
    const holding = deferred();
    const Hold = defineStep("Hold", {
      executeOptions: { locks: [guarded] },
      execute: async (context) => {
        holding.resolve();
        await gate.promise;
        context.write(guarded, (context.read(guarded) ?? 0) + 1);
        return deadEnd();
      },
    });
    const flow = defineFlow({
      type: "LockRetries",
      start: "Hold",
      steps: [Hold],
      persistence: { guarded },
      rpcs: { bump: rpc({ name: "bump", locks: [guarded], handler: async (context) => { await context.write(guarded, ((await context.read(guarded)) ?? 0) + 10); return "bumped"; } }) },
    });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "lock-retries-1");
      await holding.promise;
      await assert.rejects(environment.client.invokeRPC(flow.bump, "lock-retries-1", undefined, { lockConflictRetryMs: 30 }), (error: unknown) =>
        RpcLockConflictError.isInstance(error) && error.message.includes("Guarded"));
      const aborted = new AbortController();
      const abortedCall = environment.client.invokeRPC(flow.bump, "lock-retries-1", undefined, { lockConflictRetryMs: 60_000, signal: aborted.signal });
      aborted.abort();
      await assert.rejects(abortedCall, (error: unknown) => RpcLockConflictError.isInstance(error));
      const waiting = environment.client.invokeRPC(flow.bump, "lock-retries-1", undefined, { lockConflictRetryMs: 60_000 });
      gate.resolve();
      assert.equal(await waiting, "bumped");
      // The Step's increment landed before the RPC's, which ran once.
      assert.deepEqual(await environment.client.getAttributes("lock-retries-1", guarded), [11]);
      assert.throws(() => environment.client.invokeRPC(flow.bump, "lock-retries-1", undefined, { lockConflictRetryMs: -1 }), (error: unknown) =>
        InvalidInputError.isInstance(error) && error.message.includes("lockConflictRetryMs -1"));
    } finally {
      await environment.dispose();
    }
  });

  it("RPCs can start movements and cancel Step types in one commit", async () => {
    const inbox = channel<string>("Inbox");
    const Waiter = defineStep("Waiter", { waitUntil: () => null, execute: () => moveTo("Parked") });
    const Parked = defineStep("Parked", { waitUntil: () => received(inbox), execute: () => deadEnd() });
    const flow = defineFlow({
      type: "RpcMoves",
      start: "Waiter",
      steps: [Waiter, Parked],
      persistence: { inbox },
      rpcs: { reset: rpc({ name: "reset", handler: (context) => { context.cancelSteps(["Parked"]); context.moveTo("Waiter"); return null; } }) },
    });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "moves-1");
      await waitForExecution(environment.client, "moves-1", "Parked", "waiting");
      await environment.client.invokeRPC(flow.reset, "moves-1");
      await waitForExecution(environment.client, "moves-1", "Parked", "waiting");
      const history = await environment.client.getStepHistory("moves-1");
      assert.equal(history.filter((entry) => entry.stepType === "Parked" && entry.status === "cancelled").length, 1);
      assert.equal((await environment.client.describe("moves-1")).executions.length, 1);
    } finally {
      await environment.dispose();
    }
  });

  it("bad RPC input, unknown flows and oversized values get clear errors and change nothing", async () => {
    const value = attribute<string>("Value");
    const flow = defineFlow({
      type: "BadInput",
      steps: [],
      persistence: { value },
      rpcs: {
        set: rpc<string, null>({
          name: "set",
          parseInput: (raw) => {
            if (typeof raw !== "string") throw new Error(`expected a string, got ${typeof raw}`);
            return raw;
          },
          handler: async (context, input) => { await context.write(value, input); return null; },
        }),
      },
    });
    const environment = await startEnvironment(options, [flow], false);
    try {
      await environment.client.start(flow, "bad-1");
      await assert.rejects(environment.client.invokeRPC(flow.set, "bad-1", 42 as never), (error: unknown) =>
        InvalidInputError.isInstance(error) && /input 42 of RPC set on Flow type BadInput is invalid: expected a string, got number/.test(error.message));
      await assert.rejects(environment.client.invokeRPC(flow.set, "missing", "x"), (error: unknown) =>
        FlowNotFoundError.isInstance(error) && error.message.includes('"missing"'));
      const huge = "x".repeat(environment.store.maxValueBytes + 1);
      await assert.rejects(environment.client.invokeRPC(flow.set, "bad-1", huge), (error: unknown) =>
        ValueTooLargeError.isInstance(error) && /Attribute Value is \d+ bytes encoded, over the store's maxValueBytes/.test(error.message));
      await assert.rejects(environment.client.describe("bad id with spaces"), /flow ID "bad id with spaces" is invalid/);
      assert.deepEqual(await environment.client.getAttributes("bad-1", value), [undefined]);
      await assert.rejects(environment.client.getAttributes("missing", value), FlowNotFoundError);
    } finally {
      await environment.dispose();
    }
  });
}
