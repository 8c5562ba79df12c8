/**
 * Random wait-and-publish programs for the one-request property test: each
 * program is one Flow whose waiters wait on Channel map instances (any-of
 * or all-of, exactly, at-least and at-most bounds, a Timer already due or one
 * that never fires) while publishers publish to them, so one publish commit
 * may complete several waits of the Flow, and a wait may match in its own
 * commit against messages queued before it.
 */
import { attributeMap } from "../../attribute/attribute.ts";
import { channelMap } from "../../channel/channel.ts";
import { allOf, anyOf, received, timer, type ChannelBound } from "../../condition/condition.ts";
import { defineFlow } from "../../flow/flow.ts";
import { deadEnd, moveToMany, movement } from "../../step/decision.ts";
import { defineStep } from "../../step/step.ts";

const box = channelMap<string>("Box");
const got = attributeMap<string>("Got");
const lateAt = Date.UTC(2100, 0, 1);

export interface RandomCondition { kind: "channel"; key: string; bound: "exactly" | "atLeast" | "atMost"; count: number }
export interface RandomTimer { kind: "timer"; due: boolean }
export interface RandomWaiter { name: string; mode: "any" | "all"; items: (RandomCondition | RandomTimer)[] }
export interface RandomProgram {
  /** In start order: waiters wait, publishers publish (each a list of [key, value]). */
  steps: ({ kind: "wait"; waiter: RandomWaiter } | { kind: "publish"; messages: [string, string][] })[];
}

/** The Channel map keys programs use: plain ones and one with an astral character and U+0001. */
export const randomKeys = ["a", "b", "é😀\u0001"];

const boundOf = (item: RandomCondition): ChannelBound => item.bound === "exactly" ? { exactly: item.count } : item.bound === "atLeast" ? { atLeast: item.count } : { atMost: item.count };

const ProgramStep = defineStep<RandomProgram>("Program", {
  execute: (_context, program) => moveToMany(program.steps.map((step, index) => step.kind === "wait"
    ? movement("RandomWait", { ...step.waiter, name: `w${index}` })
    : movement("RandomPublish", { messages: step.messages }))),
});
const RandomWaitStep = defineStep<RandomWaiter>("RandomWait", {
  waitUntil: (_context, waiter) => {
    const items = waiter.items.map((item, index) => item.kind === "timer"
      ? timer(`t${index}`, { at: item.due ? 0 : lateAt })
      : received(box.instance(item.key), boundOf(item)));
    return waiter.mode === "any" ? anyOf(...items) : allOf(...items);
  },
  execute: (context, waiter) => {
    const consumed = randomKeys.flatMap((key) => context.consumed(box.instance(key)).map((message) => `${key}=${message.message}@${message.messageId.slice(0, 12)}`));
    context.write(got.instance(waiter.name), consumed.join(","));
    return deadEnd();
  },
});
const RandomPublishStep = defineStep<{ messages: [string, string][] }>("RandomPublish", {
  execute: (context, input) => {
    for (const [key, value] of input.messages) context.publish(box.instance(key), value);
    return deadEnd();
  },
});
export const randomWaitsFlow = defineFlow({ type: "ReviewRandomWaits", start: "Program", steps: [ProgramStep, RandomWaitStep, RandomPublishStep], persistence: { box, got } });
