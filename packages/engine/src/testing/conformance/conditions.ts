import assert from "node:assert/strict";
import { it } from "node:test";
import { attributeMap } from "../../attribute/attribute.ts";
import { channel, channelMap } from "../../channel/channel.ts";
import { defineFlow } from "../../flow/flow.ts";
import { rpc } from "../../rpc/rpc.ts";
import { deadEnd } from "../../step/decision.ts";
import { defineStep } from "../../step/step.ts";
import { allOf, anyOf, received, timer, type ChannelBound, type Condition } from "../../condition/condition.ts";
import { pollUntil } from "../poll-until.ts";
import { startEnvironment, type StoreConformanceOptions } from "./harness.ts";

const red = channel<string>("Red");
const blue = channel<string>("Blue");
const replies = channelMap<string>("Replies");
const results = attributeMap<{ red: string[]; blue: string[]; reply: string[]; timers: string[] }>("Results");

type ConditionSpec =
  | { timer: string; afterMs: number }
  | { channel: "red" | "blue"; bound?: ChannelBound }
  | { reply: string; bound?: ChannelBound };

interface ProbeInput {
  name: string;
  mode: "any" | "all";
  conditions: ConditionSpec[];
}

function toCondition(spec: ConditionSpec): Condition {
  if ("timer" in spec) return timer(spec.timer, { afterMs: spec.afterMs });
  if ("reply" in spec) return received(replies.instance(spec.reply), spec.bound);
  return received(spec.channel === "red" ? red : blue, spec.bound);
}

const Probe = defineStep<ProbeInput>("Probe", {
  waitUntil: (_context, input) => (input.mode === "any" ? anyOf : allOf)(...input.conditions.map(toCondition)),
  execute: (context, input) => {
    const replyKeys = input.conditions.flatMap((spec) => ("reply" in spec ? [spec.reply] : []));
    context.write(results.instance(input.name), {
      red: context.consumed(red).map((message) => message.message),
      blue: context.consumed(blue).map((message) => message.message),
      reply: replyKeys.flatMap((key) => context.consumed(replies.instance(key)).map((message) => message.message)),
      timers: ["t1", "t2"].filter((id) => context.timerFired(id)),
    });
    return deadEnd();
  },
  load: (input) => [results.instance(input.name)],
});

interface SetupInput {
  /** "red", "blue", or a Replies key. */
  publish: { channel: string; value: string }[];
  probes: ProbeInput[];
}

const conditionFlow = defineFlow({
  type: "Conditions",
  steps: [Probe],
  persistence: { red, blue, replies, results },
  rpcs: {
    setup: rpc<SetupInput, null>({
      name: "setup",
      handler: async (context, input) => {
        for (const message of input.publish) {
          const ref = message.channel === "red" ? red : message.channel === "blue" ? blue : replies.instance(message.channel);
          await context.publish(ref, message.value);
        }
        for (const probe of input.probes) context.moveTo("Probe", probe);
        return null;
      },
    }),
    pending: rpc<"red" | "blue", string[]>({
      name: "pending",
      handler: async (context, name) => (await context.listMessages(name === "red" ? red : blue)).map((message) => message.message),
    }),
  },
});

export function conditionTests(options: StoreConformanceOptions): void {
  async function run(flowId: string, setup: SetupInput, probeNames: string[]) {
    const environment = await startEnvironment(options, [conditionFlow]);
    await environment.client.start(conditionFlow, flowId);
    await environment.client.invokeRPC(conditionFlow.setup, flowId, setup);
    const values = await pollUntil(async () => {
      const found = await environment.client.getAttributes(flowId, ...probeNames.map((name) => results.instance(name)));
      return found.every((value) => value !== undefined) ? found : undefined;
    }, { description: `probes ${probeNames.join(", ")} of ${flowId}` });
    return { environment, values };
  }

  it("any-of: a due Timer wins over a ready message, and the message stays queued", async () => {
    const { environment, values } = await run("tie-1", {
      publish: [{ channel: "red", value: "r1" }],
      probes: [{ name: "p", mode: "any", conditions: [{ channel: "red" }, { timer: "t1", afterMs: 0 }] }],
    }, ["p"]);
    try {
      assert.deepEqual(values[0], { red: [], blue: [], reply: [], timers: ["t1"] });
      assert.deepEqual(await environment.client.invokeRPC(conditionFlow.pending, "tie-1", "red"), ["r1"]);
    } finally {
      await environment.dispose();
    }
  });

  it("any-of: Channels win in declaration order and the loser's messages stay queued", async () => {
    const { environment, values } = await run("order-1", {
      publish: [{ channel: "red", value: "r1" }, { channel: "blue", value: "b1" }],
      probes: [{ name: "p", mode: "any", conditions: [{ channel: "blue" }, { channel: "red" }, { timer: "t1", afterMs: 60_000 }] }],
    }, ["p"]);
    try {
      assert.deepEqual(values[0], { red: [], blue: ["b1"], reply: [], timers: [] });
      assert.deepEqual(await environment.client.invokeRPC(conditionFlow.pending, "order-1", "red"), ["r1"]);
    } finally {
      await environment.dispose();
    }
  });

  it("bounds: exactly takes the n oldest, atLeast takes all, atMost takes up to n", async () => {
    const five = ["1", "2", "3", "4", "5"].map((value) => ({ channel: "red", value }));
    const exactly = await run("bounds-exactly", { publish: five, probes: [{ name: "p", mode: "any", conditions: [{ channel: "red", bound: { exactly: 3 } }] }] }, ["p"]);
    try {
      assert.deepEqual(exactly.values[0]?.red, ["1", "2", "3"]);
      assert.deepEqual(await exactly.environment.client.invokeRPC(conditionFlow.pending, "bounds-exactly", "red"), ["4", "5"]);
    } finally {
      await exactly.environment.dispose();
    }
    const atLeast = await run("bounds-at-least", { publish: five, probes: [{ name: "p", mode: "any", conditions: [{ channel: "red", bound: { atLeast: 2 } }] }] }, ["p"]);
    try {
      assert.deepEqual(atLeast.values[0]?.red, ["1", "2", "3", "4", "5"]);
    } finally {
      await atLeast.environment.dispose();
    }
    const atMost = await run("bounds-at-most", { publish: five.slice(0, 3), probes: [{ name: "p", mode: "any", conditions: [{ channel: "red", bound: { atMost: 2 } }] }] }, ["p"]);
    try {
      assert.deepEqual(atMost.values[0]?.red, ["1", "2"]);
      assert.deepEqual(await atMost.environment.client.invokeRPC(conditionFlow.pending, "bounds-at-most", "red"), ["3"]);
    } finally {
      await atMost.environment.dispose();
    }
  });

  it("an exactly-n condition is not ready with fewer messages, and becomes ready when the rest arrive", async () => {
    const environment = await startEnvironment(options, [conditionFlow]);
    try {
      await environment.client.start(conditionFlow, "bounds-wait");
      await environment.client.invokeRPC(conditionFlow.setup, "bounds-wait", {
        publish: [{ channel: "red", value: "1" }],
        probes: [{ name: "p", mode: "any", conditions: [{ channel: "red", bound: { exactly: 2 } }] }],
      });
      await pollUntil(async () => (await environment.client.describe("bounds-wait")).executions.some((execution) => execution.status === "waiting"));
      assert.deepEqual(await environment.client.getAttributes("bounds-wait", results.instance("p")), [undefined]);
      await environment.client.invokeRPC(conditionFlow.setup, "bounds-wait", { publish: [{ channel: "red", value: "2" }], probes: [] });
      const [value] = await pollUntil(async () => {
        const found = await environment.client.getAttributes("bounds-wait", results.instance("p"));
        return found[0] === undefined ? undefined : found;
      });
      assert.deepEqual(value?.red, ["1", "2"]);
    } finally {
      await environment.dispose();
    }
  });

  it("all-of: ready only when every Timer fired and every Channel is ready; all of them consume", async () => {
    const environment = await startEnvironment(options, [conditionFlow]);
    try {
      await environment.client.start(conditionFlow, "all-1");
      await environment.client.invokeRPC(conditionFlow.setup, "all-1", {
        publish: [{ channel: "red", value: "r1" }],
        probes: [{ name: "p", mode: "all", conditions: [{ channel: "red" }, { channel: "blue" }, { timer: "t1", afterMs: 0 }] }],
      });
      await pollUntil(async () => (await environment.client.describe("all-1")).executions.some((execution) => execution.status === "waiting"));
      assert.deepEqual(await environment.client.getAttributes("all-1", results.instance("p")), [undefined]);
      await environment.client.invokeRPC(conditionFlow.setup, "all-1", { publish: [{ channel: "blue", value: "b1" }], probes: [] });
      const [value] = await pollUntil(async () => {
        const found = await environment.client.getAttributes("all-1", results.instance("p"));
        return found[0] === undefined ? undefined : found;
      });
      assert.deepEqual(value, { red: ["r1"], blue: ["b1"], reply: [], timers: ["t1"] });
      assert.deepEqual(await environment.client.invokeRPC(conditionFlow.pending, "all-1", "red"), []);
    } finally {
      await environment.dispose();
    }
  });

  it("each message is consumed by exactly one wait, the oldest waiting first", async () => {
    const environment = await startEnvironment(options, [conditionFlow]);
    try {
      await environment.client.start(conditionFlow, "once-1");
      await environment.client.invokeRPC(conditionFlow.setup, "once-1", {
        publish: [],
        probes: [
          { name: "first", mode: "any", conditions: [{ channel: "red" }] },
          { name: "second", mode: "any", conditions: [{ channel: "red" }] },
        ],
      });
      await pollUntil(async () => (await environment.client.describe("once-1")).executions.filter((execution) => execution.status === "waiting").length === 2);
      await environment.client.invokeRPC(conditionFlow.setup, "once-1", { publish: [{ channel: "red", value: "only" }], probes: [] });
      const [first] = await pollUntil(async () => {
        const found = await environment.client.getAttributes("once-1", results.instance("first"));
        return found[0] === undefined ? undefined : found;
      });
      assert.deepEqual(first?.red, ["only"]);
      assert.deepEqual(await environment.client.getAttributes("once-1", results.instance("second")), [undefined]);
      assert.equal((await environment.client.describe("once-1")).executions.filter((execution) => execution.status === "waiting").length, 1);
    } finally {
      await environment.dispose();
    }
  });

  it("ChannelMap instances are independent queues", async () => {
    const { environment, values } = await run("map-1", {
      publish: [{ channel: "k1", value: "one" }, { channel: "k2", value: "two" }],
      probes: [{ name: "p", mode: "any", conditions: [{ reply: "k2" }] }],
    }, ["p"]);
    try {
      assert.deepEqual(values[0]?.reply, ["two"]);
    } finally {
      await environment.dispose();
    }
  });
}
