import { anyOf, attribute, channel, completeFlow, defineFlow, defineStep, moveTo, received, rpc, stream, timer } from "@perdure/engine";

/** Where the countdown is; readable by RPC at any time. */
export const remaining = attribute<number>("Remaining");
/** A message here ends the countdown early. */
export const abortRequests = channel<{ reason: string }>("AbortRequests");
/** Live progress for readers. */
export const progress = stream<{ remaining: number; at: string }>("Progress");

/** Waits one tick (a durable Timer) unless an abort request arrives first. */
const Tick = defineStep<{ tickMs: number }>("Tick", {
  waitUntil: (_context, input) => anyOf(timer("tick", { afterMs: input.tickMs }), received(abortRequests)),
  execute: async (context, input) => {
    const [abort] = context.consumed(abortRequests);
    if (abort !== undefined) return completeFlow({ aborted: abort.message.reason });
    const left = (context.read(remaining) ?? 0) - 1;
    context.write(remaining, left);
    await context.writeStream(progress, { remaining: left, at: new Date().toISOString() });
    return left <= 0 ? completeFlow({ aborted: null }) : moveTo("Tick", input);
  },
});

const Start = defineStep<{ from: number; tickMs: number }>("Start", {
  execute: (context, input) => {
    context.write(remaining, input.from);
    return moveTo("Tick", { tickMs: input.tickMs });
  },
});

/** A countdown from `from` to zero, one durable Timer per tick. */
export const countdownFlow = defineFlow({
  type: "Countdown",
  start: "Start",
  steps: [Start, Tick],
  persistence: { remaining, abortRequests, progress },
  rpcs: {
    abort: rpc<{ reason: string }, boolean>({
      name: "abort",
      parseInput: (raw) => {
        const reason = (raw as { reason?: unknown } | null)?.reason;
        if (typeof reason !== "string" || reason.trim() === "") throw new Error("reason must be a non-blank string");
        return { reason };
      },
      handler: async (context, input) => {
        await context.publish(abortRequests, input);
        return true;
      },
    }),
  },
});
