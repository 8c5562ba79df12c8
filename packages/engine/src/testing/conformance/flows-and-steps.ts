import assert from "node:assert/strict";
import { it } from "node:test";
import { attribute, attributeMap } from "../../attribute/attribute.ts";
import { channel } from "../../channel/channel.ts";
import { InvalidDefinitionError } from "../../errors/invalid-definition-error.ts";
import { defineFlow } from "../../flow/flow.ts";
import { rpc } from "../../rpc/rpc.ts";
import { completeFlow, deadEnd, failFlow, movement, moveTo, moveToMany } from "../../step/decision.ts";
import { defineStep } from "../../step/step.ts";
import { received } from "../../condition/condition.ts";
import { pollUntil } from "../poll-until.ts";
import { startEnvironment, waitForExecution, type StoreConformanceOptions } from "./harness.ts";

export function flowAndStepTests(options: StoreConformanceOptions): void {
  it("rejects malformed definitions with errors naming the bad part", () => {
    const noop = defineStep("Noop", { execute: () => deadEnd() });
    assert.throws(() => defineFlow({ type: "Bad", steps: [noop, noop] }), (error: unknown) =>
      InvalidDefinitionError.isInstance(error) && /Step type Noop is defined twice/.test(error.message));
    assert.throws(() => defineFlow({ type: "Bad", start: "Missing", steps: [noop] }), /start Step Missing is not one of its steps/);
    assert.throws(() => defineFlow({ type: "Bad", steps: [defineStep("A", { execute: () => deadEnd(), failureRoute: "Nowhere" })] }), /failure route Nowhere/);
    assert.throws(() => defineFlow({ type: "bad name!", steps: [] }), /Flow name "bad name!" is invalid/);
    assert.throws(() => defineFlow({ type: "Bad", steps: [], persistence: { a: attribute("Same"), b: channel("Same") } }), /persistence name Same is declared twice/);
    assert.throws(() => defineFlow({ type: "Bad", steps: [], persistence: { flowType: attribute("X") } }), /property "flowType" is used twice or reserved/);
    const lockStep = defineStep("Locked", { execute: () => deadEnd(), executeOptions: { locks: [attribute("Undeclared")] } });
    assert.throws(() => defineFlow({ type: "Bad", steps: [lockStep] }), /locks Undeclared, which is not an Attribute/);
    assert.throws(() => defineStep("NoExecute", {} as never), /has no execute function/);
    assert.throws(() => attributeMap("Map").instance(""), /instance key "" of Map is invalid/);
  });

  it("exposes persistence definitions and RPC references as properties of the definition", () => {
    const balance = attribute<number>("Balance");
    const flow = defineFlow({
      type: "Exposed",
      steps: [],
      persistence: { balance },
      rpcs: { getBalance: rpc({ name: "get_balance", handler: (context) => context.read(balance) }) },
    });
    assert.equal(flow.balance, balance);
    assert.equal(flow.getBalance.name, "get_balance");
    assert.equal(flow.getBalance.flowType, "Exposed");
    assert.equal(flow.getBalance.flow, flow);
  });

  it("moves through a chain of Steps, passing each its input, and completes with an output", async () => {
    const visits = attribute<string[]>("Visits");
    const First = defineStep<{ n: number }>("First", {
      execute: (context, input) => {
        context.write(visits, [...(context.read(visits) ?? []), `first:${input.n}`]);
        return moveTo("Second", { n: input.n + 1 });
      },
    });
    const Second = defineStep<{ n: number }>("Second", {
      execute: (context, input) => {
        context.write(visits, [...(context.read(visits) ?? []), `second:${input.n}`]);
        return completeFlow({ last: input.n });
      },
    });
    const flow = defineFlow({ type: "Chain", start: "First", steps: [First, Second], persistence: { visits } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "chain-1", { n: 1 });
      await environment.waitForStatus("chain-1", "completed");
      const description = await environment.client.describe("chain-1");
      assert.deepEqual(description.output, { last: 2 });
      assert.deepEqual(description.executions, []);
      assert.deepEqual(await environment.client.getAttributes("chain-1", visits), [["first:1", "second:2"]]);
    } finally {
      await environment.dispose();
    }
  });

  it("runs many movements in parallel and joins them through a Channel count condition", async () => {
    const done = channel<number>("Done");
    const total = attribute<number>("Total");
    const Fan = defineStep("Fan", {
      execute: () => moveToMany([...Array.from({ length: 20 }, (_, index) => movement("Work", index)), movement("Join")]),
    });
    const Work = defineStep<number>("Work", {
      execute: (context, input) => {
        context.publish(done, input * 2);
        return deadEnd();
      },
    });
    const Join = defineStep("Join", {
      waitUntil: () => received(done, { exactly: 20 }),
      execute: (context) => {
        context.write(total, context.consumed(done).reduce((sum, message) => sum + message.message, 0));
        return completeFlow();
      },
    });
    const flow = defineFlow({ type: "FanOut", start: "Fan", steps: [Fan, Work, Join], persistence: { done, total } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "fan-1");
      await environment.waitForStatus("fan-1", "completed");
      assert.deepEqual(await environment.client.getAttributes("fan-1", total), [2 * (19 * 20) / 2]);
    } finally {
      await environment.dispose();
    }
  });

  it("keeps a Flow whose branches all dead-end alive, so an RPC can move it again", async () => {
    const marks = attribute<number>("Marks");
    const Mark = defineStep("Mark", {
      execute: (context) => {
        context.write(marks, (context.read(marks) ?? 0) + 1);
        return deadEnd();
      },
    });
    const flow = defineFlow({
      type: "DeadEnds",
      start: "Mark",
      steps: [Mark],
      persistence: { marks },
      rpcs: { again: rpc({ name: "again", handler: (context) => context.moveTo("Mark") }) },
    });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "dead-1");
      await pollUntil(async () => (await environment.client.getAttributes("dead-1", marks))[0] === 1);
      await pollUntil(async () => (await environment.client.describe("dead-1")).executions.length === 0);
      assert.equal((await environment.client.describe("dead-1")).status, "running");
      await environment.client.invokeRPC(flow.again, "dead-1");
      await pollUntil(async () => (await environment.client.getAttributes("dead-1", marks))[0] === 2);
    } finally {
      await environment.dispose();
    }
  });

  it("fails the Flow with the decision's error and cancels its other executions", async () => {
    const never = channel<string>("Never");
    const Start = defineStep("Start", { execute: () => moveToMany([movement("Waiter"), movement("Failer")]) });
    const Waiter = defineStep("Waiter", { waitUntil: () => received(never), execute: () => deadEnd() });
    const Failer = defineStep("Failer", {
      // Give the waiter time to reach its wait first.
      waitUntil: () => null,
      execute: async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return failFlow("order 7 does not exist");
      },
    });
    const flow = defineFlow({ type: "Failing", start: "Start", steps: [Start, Waiter, Failer], persistence: { never } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "fail-1");
      await environment.waitForStatus("fail-1", "failed");
      const description = await environment.client.describe("fail-1");
      assert.equal(description.error, "order 7 does not exist");
      assert.deepEqual(description.executions, []);
      const history = await environment.client.getStepHistory("fail-1");
      assert.ok(history.some((entry) => entry.stepType === "Waiter" && entry.status === "cancelled"));
    } finally {
      await environment.dispose();
    }
  });

  it("cancels Step types named by a decision before starting its new movements", async () => {
    const never = channel<string>("Never");
    const Start = defineStep("Start", { execute: () => moveToMany([movement("Waiter"), movement("Canceller")]) });
    const Waiter = defineStep("Waiter", { waitUntil: () => received(never), execute: () => completeFlow("waiter") });
    const Canceller = defineStep("Canceller", {
      execute: async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        // Cancels the old Waiter; the new Waiter this decision starts survives.
        return moveTo("Waiter", null, { cancel: ["Waiter"] });
      },
    });
    const flow = defineFlow({ type: "Cancelling", start: "Start", steps: [Start, Waiter, Canceller], persistence: { never } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "cancel-1");
      await pollUntil(async () => (await environment.client.getStepHistory("cancel-1")).some((entry) => entry.stepType === "Canceller" && entry.status === "completed"));
      await waitForExecution(environment.client, "cancel-1", "Waiter", "waiting");
      const description = await environment.client.describe("cancel-1");
      assert.equal(description.executions.length, 1);
      const history = await environment.client.getStepHistory("cancel-1");
      assert.equal(history.filter((entry) => entry.stepType === "Waiter" && entry.status === "cancelled").length, 1);
    } finally {
      await environment.dispose();
    }
  });
}
