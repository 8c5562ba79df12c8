/**
 * The Flow both one-request equivalence tests run, once with a store's
 * one-request operations and once without: every kind of Step result the
 * one-request commit takes.
 */
import assert from "node:assert/strict";
import { attribute, attributeMap } from "../../attribute/attribute.ts";
import { channel, channelMap } from "../../channel/channel.ts";
import { allOf, anyOf, received, timer } from "../../condition/condition.ts";
import { Client } from "../../client/client.ts";
import { defineFlow } from "../../flow/flow.ts";
import { completeFlow, deadEnd, failFlow, moveTo, moveToMany, movement } from "../../step/decision.ts";
import { defineStep } from "../../step/step.ts";
import type { Store } from "../../store/store.ts";
import { stream } from "../../stream/stream.ts";
import { Worker } from "../../worker/worker.ts";
import { pollUntil } from "../poll-until.ts";

const counter = attribute<number>("Counter");
const note = attribute<string>("Note");
const tallies = attributeMap<number>("Tallies");
/** Small enough that the long Flow's writes trim it. */
const progress = stream<string>("Progress", { capacityBytes: 400 });

/**
 * Every kind of Step result the one-request commit takes: writes and deletes, moves (one with a load selection), fan-out, dead ends, a wait without conditions, completion and failure;
 * with a Stream write (trimmed by its budget) and a heartbeat with a checkpoint, which a store may send as one request each too.
 */
const CountStep = defineStep<{ remaining: number; fail: boolean; tallied?: boolean }>("Count", {
  executeOptions: { heartbeatTimeoutMs: 60_000 },
  execute: async (context, input) => {
    await context.writeStream(progress, `${context.flowId} has ${input.remaining} to go`);
    await context.heartbeat(`checkpoint ${input.remaining}`);
    context.write(counter, (context.read(counter) ?? 0) + 1);
    context.write(note, input.remaining % 2 === 0 ? `even ${input.remaining}` : null);
    if (input.remaining > 0 && input.remaining % 5 === 0 && !input.tallied) return moveTo("Tally", input, { load: [tallies.all()] });
    if (input.remaining > 0) return moveTo("Count", { ...input, remaining: input.remaining - 1, tallied: false });
    // Idle first: with one attempt at a time it runs before Branch (which is asked, then executed)
    // ends the Flow, whatever the timing, so both paths leave the same rows.
    return moveToMany([movement("Idle", {}), movement("Branch", { fail: input.fail })]);
  },
});
/**
 * A method with a lock and a load selection that depends on the input, reached by a movement that
 * selects a load of its own: a store whose claims take locks and loads claims it in one request too.
 */
const TallyStep = defineStep<{ remaining: number; fail: boolean }>("Tally", {
  load: (input) => [tallies.instance(String(input.remaining))],
  executeOptions: { locks: [note] },
  execute: (context, input) => {
    const own = tallies.instance(String(input.remaining));
    // Loaded by the movement's selection of the whole map.
    const earlier = context.read(tallies.instance(String(input.remaining + 5))) ?? 0;
    context.write(own, (context.read(own) ?? 0) + earlier + 1);
    return moveTo("Count", { ...input, tallied: true });
  },
});
const IdleStep = defineStep("Idle", { execute: () => deadEnd() });
const BranchStep = defineStep<{ fail: boolean }>("Branch", {
  // No conditions: the execution is ready at once.
  waitUntil: () => null,
  execute: (context, input) => (input.fail ? failFlow(`flow ${context.flowId} failed on purpose`) : completeFlow({ counted: context.read(counter) })),
});
export const mixedFlow = defineFlow({ type: "OneRequestMixed", start: "Count", steps: [CountStep, TallyStep, IdleStep, BranchStep], persistence: { counter, note, tallies, progress } });

const results = channel<number>("Results");
const signals = channelMap<string>("Signals");
const gathered = attribute<number[]>("Gathered");
/** What each Produce saw queued (a Channel load, one of them under the escaped key). */
const seenQueued = attributeMap<string>("SeenQueued");
/** A key with U+0001, which a store may escape: matching must find the messages under it. */
const signalKey = "key\u0001one";
/** Far in the future and absolute, so the stored conditions are the same text on every run. */
const lateAt = Date.UTC(2100, 0, 1);

/**
 * Waits with conditions and publishes, which a store that matches waits
 * itself commits in one request too: a wait that matches later (when a
 * publish completes it, consuming exactly two of three messages, with a
 * Timer that never fires and goes), one that matches at once (a Timer
 * already due, all-of), one on a map instance with an at-most bound, and
 * publishes that complete waits of other executions.
 */
const SpreadStep = defineStep("Spread", {
  execute: () => moveToMany([movement("Collect", {}), movement("Produce", { remaining: 3 }), movement("Listen", {})]),
});
const CollectStep = defineStep("Collect", {
  waitUntil: () => anyOf(received(results, { exactly: 2 }), timer("late", { at: lateAt })),
  execute: (context) => {
    context.write(gathered, context.consumed(results).map((message) => message.message));
    return moveTo("Gather", {});
  },
});
const ProduceStep = defineStep<{ remaining: number }>("Produce", {
  load: [results, signals.instance(signalKey)],
  execute: (context, input) => {
    const queued = [...context.pendingMessages(results), ...context.pendingMessages(signals.instance(signalKey))];
    context.write(seenQueued.instance(String(input.remaining)), queued.map((message) => String(message.message)).join(" "));
    context.publish(results, input.remaining);
    if (input.remaining === 2) context.publish(signals.instance(signalKey), `signal ${input.remaining}`);
    return input.remaining > 1 ? moveTo("Produce", { remaining: input.remaining - 1 }) : deadEnd();
  },
});
const ListenStep = defineStep("Listen", {
  waitUntil: () => anyOf(received(signals.instance(signalKey), { atMost: 5 })),
  execute: (context) => {
    context.write(note, context.consumed(signals.instance(signalKey)).map((message) => message.message).join(", "));
    return deadEnd();
  },
});
const GatherStep = defineStep("Gather", {
  // A Timer already due and a message left over: matched in the commit of the wait itself.
  waitUntil: () => allOf(timer("due", { at: 0 }), received(results, { atLeast: 1 })),
  // A static selection: a store may read it in the claim.
  load: [seenQueued.all()],
  execute: (context) => completeFlow({
    gathered: [...(context.read(gathered) ?? []), ...context.consumed(results).map((message) => message.message)],
    seen: context.read(seenQueued.instance("2")),
  }),
});
export const waitsFlow = defineFlow({
  type: "OneRequestWaits",
  start: "Spread",
  steps: [SpreadStep, CollectStep, ProduceStep, ListenStep, GatherStep],
  persistence: { results, signals, gathered, note, seenQueued },
});

/**
 * Runs three mixed Flows to their ends on `store`, one attempt at a time, and an idempotent second start;
 * then the waits Flow, unless `waits` is false.
 */
export async function runMixedFlows(store: Store, options: { waits?: boolean } = {}): Promise<void> {
  const client = new Client({ store });
  // One attempt at a time, so parallel executions of a Flow commit in the same order on both paths.
  const worker = new Worker({ store, flows: [mixedFlow, waitsFlow], concurrency: 1 });
  await worker.start();
  const flows = [
    { flowId: "short", input: { remaining: 0, fail: false } },
    { flowId: "long", input: { remaining: 70, fail: false } },
    { flowId: "failing", input: { remaining: 3, fail: true } },
  ];
  try {
    for (const { flowId, input } of flows) assert.deepEqual(await client.start(mixedFlow, flowId, input, { requestId: `request-${flowId}` }), { created: true });
    // An idempotent second start changes nothing.
    assert.deepEqual(await client.start(mixedFlow, "short", { remaining: 0, fail: false }, { requestId: "request-short" }), { created: false });
    const finished = async (flowId: string): Promise<void> => {
      // A loaded machine (a whole CI run on two cores) may take far longer than the Flows need alone.
      await pollUntil(async () => (await client.describe(flowId)).status !== "running", { timeoutMs: 120_000, description: `${flowId} to finish` });
    };
    for (const { flowId } of flows) await finished(flowId);
    // The waits Flow runs alone: beside the others, which of its executions a commit hands over
    // depends on the millisecond each chain was queued at, and the rows would differ by timing.
    if (options.waits === false) return;
    assert.deepEqual(await client.start(waitsFlow, "waits", {}), { created: true });
    await finished("waits");
  } finally {
    await worker.close();
  }
}
