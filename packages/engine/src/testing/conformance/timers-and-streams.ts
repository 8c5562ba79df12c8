import assert from "node:assert/strict";
import { it } from "node:test";
import { attribute } from "../../attribute/attribute.ts";
import { InvalidResumeTokenError } from "../../errors/invalid-resume-token-error.ts";
import { defineFlow } from "../../flow/flow.ts";
import { rpc } from "../../rpc/rpc.ts";
import { completeFlow, deadEnd } from "../../step/decision.ts";
import { defineStep } from "../../step/step.ts";
import { stream } from "../../stream/stream.ts";
import { anyOf, received, timer } from "../../condition/condition.ts";
import { channel } from "../../channel/channel.ts";
import { pollUntil } from "../poll-until.ts";
import type { StreamAppend } from "../../store/step-commit.ts";
import { appendStreamBatch } from "../../stream/stream-batch.ts";
import { deferred, startEnvironment, waitForExecution, type StoreConformanceOptions } from "./harness.ts";

export function timerAndStreamTests(options: StoreConformanceOptions): void {
  it("a relative Timer fires on its own and execute sees which Timer fired", async () => {
    const fired = attribute<string[]>("Fired");
    const Nap = defineStep("Nap", {
      waitUntil: () => anyOf(timer("short", { afterMs: 50 }), timer("long", { afterMs: 60_000 })),
      execute: (context) => {
        context.write(fired, ["short", "long"].filter((id) => context.timerFired(id)));
        return completeFlow();
      },
    });
    const flow = defineFlow({ type: "Naps", start: "Nap", steps: [Nap], persistence: { fired } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "nap-1");
      await environment.waitForStatus("nap-1", "completed");
      assert.deepEqual(await environment.client.getAttributes("nap-1", fired), [["short"]]);
    } finally {
      await environment.dispose();
    }
  });

  it("an absolute Timer survives a Worker restart, fires while no Worker runs, and skipTimer fires one early", async () => {
    const fired = attribute<string[]>("Fired");
    const Wait = defineStep("Wait", {
      waitUntil: () => anyOf(timer("soon", { at: Date.now() + 300 })),
      execute: (context) => {
        context.write(fired, [...(context.read(fired) ?? []), "soon"]);
        return deadEnd();
      },
    });
    const Day = defineStep("Day", {
      waitUntil: () => anyOf(timer("one-day", { afterMs: 86_400_000 })),
      execute: (context) => {
        context.write(fired, [...(context.read(fired) ?? []), "one-day"]);
        return completeFlow();
      },
    });
    const flow = defineFlow({
      type: "DurableTimers",
      start: "Wait",
      steps: [Wait, Day],
      persistence: { fired },
      rpcs: { day: rpc({ name: "day", handler: (context) => { context.moveTo("Day"); return null; } }) },
    });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "timers-1");
      await waitForExecution(environment.client, "timers-1", "Wait", "waiting");
      await environment.stopWorker();
      await new Promise((resolve) => setTimeout(resolve, 400));
      await environment.startWorker();
      await pollUntil(async () => (await environment.client.getAttributes("timers-1", fired))[0]?.length === 1);
      await environment.client.invokeRPC(flow.day, "timers-1");
      await waitForExecution(environment.client, "timers-1", "Day", "waiting");
      assert.equal(await environment.client.skipTimer("timers-1", "one-day"), 1);
      await environment.waitForStatus("timers-1", "completed");
      assert.deepEqual(await environment.client.getAttributes("timers-1", fired), [["soon", "one-day"]]);
      assert.equal(await environment.client.skipTimer("timers-1", "one-day"), 0);
    } finally {
      await environment.dispose();
    }
  });

  it("a Timer that is due wins its any-of wait over a message published after it fell due, before any Worker fired it", async () => {
    const outcome = attribute<{ timers: string[]; pokes: string[] }>("Outcome");
    const pokes = channel<string>("Pokes");
    const Watch = defineStep("Watch", {
      waitUntil: () => anyOf(timer("deadline", { afterMs: 86_400_000 }), received(pokes)),
      execute: (context) => {
        context.write(outcome, { timers: ["deadline"].filter((id) => context.timerFired(id)), pokes: context.consumed(pokes).map((entry) => entry.message) });
        return deadEnd();
      },
    });
    const flow = defineFlow({
      type: "DueTimerVersusPoke",
      start: "Watch",
      steps: [Watch],
      persistence: { outcome, pokes },
      rpcs: {
        poke: rpc({ name: "poke", handler: async (context) => { await context.publish(pokes, "poke"); return null; } }),
        pending: rpc({ name: "pending", handler: async (context) => (await context.listMessages(pokes)).map((entry) => entry.message) }),
      },
    });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "due-1");
      await waitForExecution(environment.client, "due-1", "Watch", "waiting");
      // No Worker from here on, so nothing fires the Timer: only the RPC's commit matches the wait.
      await environment.stopWorker();
      assert.equal(await environment.client.skipTimer("due-1", "deadline"), 1);
      await environment.client.invokeRPC(flow.poke, "due-1");
      const [watch] = (await environment.client.describe("due-1")).executions;
      assert.equal(watch?.status, "ready", "the poke's commit completed the wait");
      await environment.startWorker();
      await pollUntil(async () => (await environment.client.getAttributes("due-1", outcome))[0] !== undefined, { description: "Watch to record what won" });
      assert.deepEqual(await environment.client.getAttributes("due-1", outcome), [{ timers: ["deadline"], pokes: [] }]);
      assert.deepEqual(await environment.client.invokeRPC(flow.pending, "due-1"), ["poke"], "the losing message stays queued");
    } finally {
      await environment.dispose();
    }
  });

  it("Stream writes are immediate, readable from a resume token, and listable", async () => {
    const progress = stream<{ step: number }>("Progress");
    const Emit = defineStep("Emit", {
      execute: async (context) => {
        for (let step = 1; step <= 5; step += 1) await context.writeStream(progress, { step });
        return completeFlow();
      },
    });
    const flow = defineFlow({ type: "Streams", start: "Emit", steps: [Emit], persistence: { progress } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "stream-1");
      await environment.waitForStatus("stream-1", "completed");
      const first = await environment.client.readStream("stream-1", progress, { limit: 2 });
      assert.deepEqual(first.messages.map((message) => message.value.step), [1, 2]);
      assert.equal(first.lost, false);
      const rest = await environment.client.readStream("stream-1", progress, { after: first.nextToken ?? "" });
      assert.deepEqual(rest.messages.map((message) => [message.index, message.value.step]), [[3, 3], [4, 4], [5, 5]]);
      const recent = await environment.client.listStreamMessages("stream-1", progress, { limit: 2 });
      assert.deepEqual(recent.map((message) => message.value.step), [4, 5]);
      const empty = await environment.client.readStream("stream-1", progress, { after: rest.nextToken ?? "", waitMs: 50 });
      assert.deepEqual(empty.messages, []);
      assert.equal(empty.nextToken, rest.nextToken);
    } finally {
      await environment.dispose();
    }
  });

  it("a running Step's Stream writes reach readers before it returns, in order per Stream, by a heartbeat's return, and its last ones before its commit", async () => {
    const progress = stream<string>("Progress");
    const other = stream<string>("Other");
    const seen = deferred();
    const beaten = deferred();
    const released = deferred();
    const Emit = defineStep("Emit", {
      execute: async (context) => {
        await context.writeStream(progress, "p1");
        await context.writeStream(other, "o1");
        await context.writeStream(progress, "p2");
        // Returns only once a reader saw these: they were sent while the Step ran.
        await seen.promise;
        await context.writeStream(progress, "p3");
        await context.heartbeat();
        beaten.resolve();
        await released.promise;
        for (let index = 4; index <= 6; index += 1) await context.writeStream(progress, `p${index}`);
        return completeFlow();
      },
    });
    const flow = defineFlow({ type: "StreamLive", start: "Emit", steps: [Emit], persistence: { progress, other } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "live-1");
      const live: string[] = [];
      let token: string | undefined;
      await pollUntil(async () => {
        const read = await environment.client.readStream("live-1", progress, token === undefined ? { waitMs: 1000 } : { after: token, waitMs: 1000 });
        live.push(...read.messages.map((message) => message.value));
        token = read.nextToken ?? token;
        return live.length >= 2;
      }, { timeoutMs: 30_000, description: "the first Progress messages" });
      assert.deepEqual(live, ["p1", "p2"]);
      assert.deepEqual((await environment.client.readStream("live-1", other, { waitMs: 5000 })).messages.map((message) => [message.index, message.value]), [[1, "o1"]]);
      assert.equal((await environment.client.describe("live-1")).status, "running");
      seen.resolve();
      await beaten.promise;
      // The heartbeat returned after p3 was stored: no waiting for it.
      assert.ok(token !== undefined);
      const beforeBeat = await environment.client.readStream("live-1", progress, { after: token });
      assert.deepEqual(beforeBeat.messages.map((message) => [message.index, message.value]), [[3, "p3"]]);
      released.resolve();
      await environment.waitForStatus("live-1", "completed");
      // The commit came after the writes: no waiting for them once the Flow completed.
      const rest = await environment.client.readStream("live-1", progress, { after: beforeBeat.nextToken ?? token });
      assert.deepEqual(rest.messages.map((message) => [message.index, message.value]), [[4, "p4"], [5, "p5"], [6, "p6"]]);
    } finally {
      seen.resolve();
      released.resolve();
      await environment.dispose();
    }
  });

  it("a batch of Stream messages takes each Stream's next indexes in order, trims as single writes do, and wakes a waiting reader", async () => {
    const progress = stream<string>("Progress", { capacityBytes: 20 });
    const other = stream<string>("Other");
    const Idle = defineStep("Idle", { waitUntil: () => anyOf(timer("never", { afterMs: 86_400_000 })), execute: () => deadEnd() });
    const flow = defineFlow({ type: "StreamBatch", start: "Idle", steps: [Idle], persistence: { progress, other } });
    const environment = await startEnvironment(options, [flow], false);
    try {
      await environment.client.start(flow, "batch-1");
      const waiting = environment.client.readStream("batch-1", other, { waitMs: 30_000 });
      const append = (stream: string, capacityBytes: number, value: string): StreamAppend =>
        ({ flowId: "batch-1", flowType: "StreamBatch", stream, value: JSON.stringify(value), writtenAt: environment.store.clock.now(), capacityBytes });
      // Six bytes each: a budget of 20 keeps three.
      const batch = [
        append("Progress", 20, "m-01"), append("Other", 1000, "o-01"), append("Progress", 20, "m-02"),
        append("Progress", 20, "m-03"), append("Progress", 20, "m-04"), append("Other", 1000, "o-02"), append("Progress", 20, "m-05"),
      ];
      assert.deepEqual(await appendStreamBatch(environment.store, batch), [1, 2, 1, 2, 3, 4, 5]);
      assert.deepEqual((await waiting).messages.map((message) => message.value), ["o-01", "o-02"]);
      assert.deepEqual((await environment.client.listStreamMessages("batch-1", progress)).map((message) => [message.index, message.value]), [[3, "m-03"], [4, "m-04"], [5, "m-05"]]);
      // A second batch continues the numbering, and an empty one writes nothing.
      assert.deepEqual(await appendStreamBatch(environment.store, [append("Progress", 20, "m-06")]), [6]);
      assert.deepEqual(await appendStreamBatch(environment.store, []), []);
      assert.deepEqual((await environment.client.listStreamMessages("batch-1", other)).map((message) => message.index), [1, 2]);
      assert.deepEqual((await environment.client.listStreamMessages("batch-1", progress)).map((message) => message.value), ["m-04", "m-05", "m-06"]);
    } finally {
      await environment.dispose();
    }
  });

  it("a waiting reader wakes for a new Stream message", async () => {
    const progress = stream<string>("Progress");
    const Emit = defineStep("Emit", {
      execute: async (context) => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        await context.writeStream(progress, "late");
        return completeFlow();
      },
    });
    const flow = defineFlow({ type: "StreamWait", start: "Emit", steps: [Emit], persistence: { progress } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "wait-1");
      const read = await environment.client.readStream("wait-1", progress, { waitMs: 5000 });
      assert.deepEqual(read.messages.map((message) => message.value), ["late"]);
    } finally {
      await environment.dispose();
    }
  });

  it("a Stream's byte budget trims the Flow type's oldest messages, and readers learn what was lost", async () => {
    const progress = stream<string>("Progress", { capacityBytes: 200 });
    const Emit = defineStep<number>("Emit", {
      execute: async (context, count) => {
        for (let index = 0; index < count; index += 1) await context.writeStream(progress, `message-${String(index).padStart(3, "0")}`);
        return deadEnd();
      },
    });
    const flow = defineFlow({ type: "StreamBudget", start: "Emit", steps: [Emit], persistence: { progress } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "budget-1", 5);
      await pollUntil(async () => (await environment.client.listStreamMessages("budget-1", progress)).length === 5);
      const early = await environment.client.readStream("budget-1", progress, { limit: 1 });
      await environment.client.start(flow, "budget-2", 20);
      await pollUntil(async () => (await environment.client.listStreamMessages("budget-2", progress)).at(-1)?.value === "message-019");
      // 200 bytes hold 15 messages of 13 bytes: budget-1's messages went first.
      assert.deepEqual(await environment.client.listStreamMessages("budget-1", progress), []);
      const retained = await environment.client.listStreamMessages("budget-2", progress);
      assert.equal(retained.length, 15);
      assert.equal(retained[0]?.value, "message-005");
      const resumed = await environment.client.readStream("budget-1", progress, { after: early.nextToken ?? "" });
      assert.equal(resumed.lost, true);
      const fromStart = await environment.client.readStream("budget-2", progress);
      assert.equal(fromStart.lost, true);
      assert.equal(fromStart.messages[0]?.index, 6);
    } finally {
      await environment.dispose();
    }
  });

  it("a large Stream message pushes out as many small ones as its budget needs, and no more", async () => {
    const progress = stream<string>("Progress", { capacityBytes: 2000 });
    const Emit = defineStep<{ small: number; large: number }>("Emit", {
      execute: async (context, input) => {
        for (let index = 0; index < input.small; index += 1) await context.writeStream(progress, `message-${String(index).padStart(3, "0")}`);
        if (input.large > 0) await context.writeStream(progress, "x".repeat(input.large));
        return deadEnd();
      },
    });
    const flow = defineFlow({ type: "StreamLargeMessage", start: "Emit", steps: [Emit], persistence: { progress } });
    const environment = await startEnvironment(options, [flow]);
    try {
      // 100 messages of 13 bytes, then one of 1,900: 1,200 bytes (93 messages) must go, over several reads.
      await environment.client.start(flow, "large-1", { small: 100, large: 1900 });
      await pollUntil(async () => (await environment.client.listStreamMessages("large-1", progress)).at(-1)?.value.length === 1900);
      const retained = await environment.client.listStreamMessages("large-1", progress);
      assert.deepEqual(retained.map((message) => message.value.length === 1900 ? "large" : message.value), [
        "message-093", "message-094", "message-095", "message-096", "message-097", "message-098", "message-099", "large",
      ]);
    } finally {
      await environment.dispose();
    }
  });

  it("rejects resume tokens of another flow, forged tokens and oversized tokens with clear errors", async () => {
    const progress = stream<string>("Progress");
    const other = stream<string>("Other");
    const Emit = defineStep("Emit", {
      execute: async (context) => {
        await context.writeStream(progress, "x");
        return completeFlow();
      },
    });
    const flow = defineFlow({ type: "Tokens", start: "Emit", steps: [Emit], persistence: { progress, other } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "tokens-1");
      await environment.client.start(flow, "tokens-2");
      await environment.waitForStatus("tokens-1", "completed");
      const { nextToken } = await environment.client.readStream("tokens-1", progress);
      assert.ok(nextToken !== undefined);
      await assert.rejects(environment.client.readStream("tokens-2", progress, { after: nextToken }), (error: unknown) =>
        InvalidResumeTokenError.isInstance(error) && /belongs to Stream Progress of Flow tokens-1, not Stream Progress of Flow tokens-2/.test(error.message));
      await assert.rejects(environment.client.readStream("tokens-1", other, { after: nextToken }), /not Stream Other of Flow tokens-1/);
      const [body, signature] = nextToken.split(".");
      const forgedBody = Buffer.from(JSON.stringify(["tokens-1", "Progress", 0])).toString("base64url");
      await assert.rejects(environment.client.readStream("tokens-1", progress, { after: `${forgedBody}.${signature ?? ""}` }), /forged or corrupt/);
      await assert.rejects(environment.client.readStream("tokens-1", progress, { after: `${body ?? ""}.AAAA` }), /forged or corrupt/);
      await assert.rejects(environment.client.readStream("tokens-1", progress, { after: "garbage" }), /forged or corrupt/);
      await assert.rejects(environment.client.readStream("tokens-1", progress, { after: "x".repeat(5000) }), /at most 4096 characters/);
    } finally {
      await environment.dispose();
    }
  });
}
