/**
 * Flows the one-request review test runs on both PostgreSQL commit paths:
 * one publish commit that completes several waits of the same Flow at once
 * (any-of, all-of, at-least, at-most, a Timer already due), payloads with
 * quotes, control characters, astral characters and a large value, and a
 * Channel key that is not well-formed UTF-16 (a lone surrogate).
 */
import { attributeMap } from "../../attribute/attribute.ts";
import { channel, channelMap } from "../../channel/channel.ts";
import { allOf, anyOf, received, timer } from "../../condition/condition.ts";
import { defineFlow } from "../../flow/flow.ts";
import { completeFlow, deadEnd, moveTo, moveToMany, movement } from "../../step/decision.ts";
import { defineStep } from "../../step/step.ts";

const inbox = channel<string>("Inbox");
const keyed = channelMap<string>("Keyed");
const seen = attributeMap<string>("Seen");
/** Far in the future and absolute, so the stored conditions are the same text on every run. */
const lateAt = Date.UTC(2100, 0, 1);
/** Quotes, a backslash, control characters, U+2028, an astral character and a key with U+0001. */
export const oddKey = "k\"\\\n\u0001\u001f\u2028é😀";
const oddValue = `"quoted" \\ back\nslash\t\u0001\u001f\u007f\u2028 é 😀 ${"x".repeat(200_000)}`;

const StartStep = defineStep("Start", {
  execute: () => moveToMany([movement("WaitOne", {}), movement("WaitAll", {}), movement("WaitOdd", {}), movement("WaitMany", {}), movement("Pub", {})]),
});
const record = (name: string, messages: { message: string }[]): string => `${name}: ${messages.map((message) => message.message.slice(0, 40)).join(" | ")}`;
const WaitOneStep = defineStep("WaitOne", {
  waitUntil: () => anyOf(received(inbox, { exactly: 1 }), timer("late", { at: lateAt })),
  execute: (context) => {
    context.write(seen.instance("one"), record("one", context.consumed(inbox)));
    return deadEnd();
  },
});
const WaitAllStep = defineStep("WaitAll", {
  // A Timer already due, and both Channels: matched only by the publish commit.
  waitUntil: () => allOf(timer("due", { at: 0 }), received(inbox, { exactly: 2 }), received(keyed.instance(oddKey), { exactly: 1 })),
  execute: (context) => {
    context.write(seen.instance("all"), record("all", [...context.consumed(inbox), ...context.consumed(keyed.instance(oddKey))]));
    return deadEnd();
  },
});
const WaitOddStep = defineStep("WaitOdd", {
  waitUntil: () => anyOf(received(keyed.instance(oddKey), { atMost: 1 })),
  execute: (context) => {
    context.write(seen.instance("odd"), record("odd", context.consumed(keyed.instance(oddKey))));
    return deadEnd();
  },
});
const WaitManyStep = defineStep("WaitMany", {
  waitUntil: () => anyOf(received(inbox, { atLeast: 1 })),
  execute: (context) => {
    context.write(seen.instance("many"), record("many", context.consumed(inbox)));
    return moveTo("Final", {});
  },
});
const PubStep = defineStep("Pub", {
  execute: (context) => {
    for (const index of [1, 2, 3, 4, 5]) context.publish(inbox, `inbox ${index} ${oddValue}`);
    for (const index of [1, 2, 3]) context.publish(keyed.instance(oddKey), `keyed ${index} ${oddValue}`);
    return deadEnd();
  },
});
const FinalStep = defineStep("Final", {
  // Whatever is left is already queued when this wait commits: it matches in its own commit.
  waitUntil: () => anyOf(received(keyed.instance(oddKey), { atLeast: 1 }), timer("late", { at: lateAt })),
  execute: (context) => completeFlow({ left: context.consumed(keyed.instance(oddKey)).length }),
});
export const reviewWaitsFlow = defineFlow({
  type: "ReviewWaits",
  start: "Start",
  steps: [StartStep, WaitOneStep, WaitAllStep, WaitOddStep, WaitManyStep, PubStep, FinalStep],
  persistence: { inbox, keyed, seen },
});

/** A lone surrogate, as a string cut in the middle of an emoji has. */
export const loneKey = "cut \ud83d";
const lone = channelMap<string>("Lone");
const plain = channel<string>("Plain");
const loneSeen = attributeMap<string>("LoneSeen");
const LoneStartStep = defineStep("LoneStart", {
  execute: () => moveToMany([
    movement("LoneWait", {}),
    movement("LonePub", {}),
    // Movement options with keys jsonb cannot hold (a lone surrogate, U+0000): the claim must still take the task.
    movement("LoneMoved", {}, { load: [loneSeen.instance(`${loneKey} moved`), loneSeen.instance("nul \u0000")] }),
  ]),
});
const LoneWaitStep = defineStep("LoneWait", {
  // Stored by the general path; a later one-request publish to the well-formed Channel must leave its matching to that path too.
  waitUntil: () => allOf(received(lone.instance(loneKey), { exactly: 1 }), received(plain, { exactly: 1 })),
  execute: (context) => completeFlow({ got: [...context.consumed(lone.instance(loneKey)), ...context.consumed(plain)].map((message) => message.message) }),
});
const LonePubStep = defineStep("LonePub", {
  execute: (context) => {
    context.publish(lone.instance(loneKey), "hello");
    return moveTo("LonePlain", {});
  },
});
const LoneMovedStep = defineStep("LoneMoved", {
  load: [loneSeen.instance("static")],
  execute: (context) => {
    context.write(loneSeen.instance("nul \u0000"), `moved ${context.read(loneSeen.instance(`${loneKey} moved`)) ?? "nothing"}`);
    return deadEnd();
  },
});
const LonePlainStep = defineStep("LonePlain", {
  // A load selection under the same key: read as the general path reads it.
  load: [loneSeen.instance(loneKey)],
  execute: (context) => {
    context.write(loneSeen.instance(loneKey), `seen ${context.read(loneSeen.instance(loneKey)) ?? "nothing"}`);
    context.publish(plain, "world");
    return deadEnd();
  },
});
export const loneKeyFlow = defineFlow({ type: "ReviewLoneKey", start: "LoneStart", steps: [LoneStartStep, LoneWaitStep, LonePubStep, LoneMovedStep, LonePlainStep], persistence: { lone, plain, loneSeen } });

const mailbox = channel<number>("Mailbox");
const RaceStartStep = defineStep("RaceStart", {
  execute: () => moveToMany([movement("RaceWait", {}), movement("RacePub", {}), movement("RacePub", {})]),
});
const RaceWaitStep = defineStep("RaceWait", {
  // Its wait commits while the publishes of the same Flow commit on other Workers.
  waitUntil: () => anyOf(received(mailbox, { exactly: 2 })),
  execute: (context) => completeFlow({ got: context.consumed(mailbox).length }),
});
const RacePubStep = defineStep("RacePub", {
  execute: (context) => {
    context.publish(mailbox, 1);
    return deadEnd();
  },
});
/** A wait and two publishes of one Flow that different Workers commit at the same time: no wake-up may be lost. */
export const raceFlow = defineFlow({ type: "ReviewRace", start: "RaceStart", steps: [RaceStartStep, RaceWaitStep, RacePubStep], persistence: { mailbox } });
