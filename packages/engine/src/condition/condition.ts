import type { ChannelRef } from "../channel/channel.ts";
import { InvalidDefinitionError } from "../errors/invalid-definition-error.ts";
import { validateName } from "../internal/validate-name.ts";

/** A durable deadline inside a wait. `timerId` is what `client.skipTimer` names. */
export interface TimerCondition {
  readonly kind: "timer";
  readonly timerId: string;
  /** Fires this many milliseconds after the wait is committed. */
  readonly afterMs?: number;
  /** Fires at this time (epoch milliseconds). */
  readonly atMs?: number;
}

/** How many queued messages a Channel condition needs and consumes. */
export type ChannelBound = { exactly: number } | { atLeast: number } | { atMost: number };

/**
 * Ready when the Channel holds enough messages:
 * - `exactly: n` — at least n queued; consumes the n oldest.
 * - `atLeast: n` — at least n queued; consumes every queued message.
 * - `atMost: n` — at least one queued; consumes up to n of the oldest.
 */
export interface ChannelCondition {
  readonly kind: "channel";
  readonly channel: ChannelRef<unknown>;
  readonly bound: ChannelBound;
}

export type Condition = TimerCondition | ChannelCondition;

/** What a `waitUntil` returns: any-of or all-of over Timers and Channels. */
export interface Conditions {
  readonly mode: "any_of" | "all_of";
  readonly conditions: readonly Condition[];
}

/**
 * A Timer condition, relative or absolute.
 *
 * @example
 * anyOf(timer("deadline", { afterMs: 60_000 }), received(flow.approvals))
 */
export function timer(timerId: string, when: { afterMs: number } | { at: Date | number }): TimerCondition {
  validateName("Timer", timerId);
  if ("afterMs" in when) {
    if (!Number.isFinite(when.afterMs) || when.afterMs < 0) {
      throw new InvalidDefinitionError(`Timer ${timerId} afterMs ${String(when.afterMs)} is invalid: use a number of milliseconds >= 0`);
    }
    return { kind: "timer", timerId, afterMs: Math.ceil(when.afterMs) };
  }
  const atMs = typeof when.at === "number" ? when.at : when.at.getTime();
  if (!Number.isFinite(atMs)) {
    throw new InvalidDefinitionError(`Timer ${timerId} time ${String(when.at)} is invalid`);
  }
  return { kind: "timer", timerId, atMs };
}

/**
 * A Channel condition; by default ready on one message, which it consumes.
 *
 * @example
 * received(flow.inbox, { atLeast: 3 })
 */
export function received<TMessage>(channelRef: ChannelRef<TMessage>, bound: ChannelBound = { exactly: 1 }): ChannelCondition {
  const count = "exactly" in bound ? bound.exactly : "atLeast" in bound ? bound.atLeast : bound.atMost;
  if (!Number.isSafeInteger(count) || count < 0 || ("atMost" in bound && count < 1)) {
    throw new InvalidDefinitionError(`Channel ${channelRef.name} bound ${JSON.stringify(bound)} is invalid: use a non-negative integer count (at least 1 for atMost)`);
  }
  return { kind: "channel", channel: channelRef as ChannelRef<unknown>, bound };
}

/** Ready when any condition is ready; timers win ties, then Channels in the order given. */
export function anyOf(...conditions: Condition[]): Conditions {
  return { mode: "any_of", conditions };
}

/** Ready when every condition is ready at once; all of them consume. */
export function allOf(...conditions: Condition[]): Conditions {
  return { mode: "all_of", conditions };
}
