import type { ChannelBound, Conditions } from "../condition/condition.ts";
import { InvalidDefinitionError } from "../errors/invalid-definition-error.ts";

/** Conditions as stored on a waiting execution: timers resolved to due times. */
export interface StoredConditions {
  mode: "any_of" | "all_of";
  items: StoredCondition[];
}

export type StoredCondition =
  | { kind: "timer"; timerId: string; dueAt: number }
  | { kind: "channel"; name: string; key: string; bound: "exactly" | "at_least" | "at_most"; count: number };

/** A consumed message as stored in a wait result. */
export interface StoredConsumedMessage {
  name: string;
  key: string;
  messageId: string;
  value: string;
  publishedAt: number;
}

/** What a completed wait delivers to `execute`, kept for its retries. */
export interface StoredWaitResult {
  firedTimers: string[];
  messages: StoredConsumedMessage[];
}

function storedBound(bound: ChannelBound): { bound: "exactly" | "at_least" | "at_most"; count: number } {
  if ("exactly" in bound) return { bound: "exactly", count: bound.exactly };
  if ("atLeast" in bound) return { bound: "at_least", count: bound.atLeast };
  return { bound: "at_most", count: bound.atMost };
}

/** Resolves what `waitUntil` returned against the commit time. */
export function storeConditions(stepType: string, conditions: Conditions, now: number): StoredConditions {
  if (conditions.mode !== "any_of" && conditions.mode !== "all_of") {
    throw new InvalidDefinitionError(`Step ${stepType} waitUntil returned ${JSON.stringify(conditions)}: use anyOf(...) or allOf(...)`);
  }
  const timerIds = new Set<string>();
  const items = conditions.conditions.map((condition): StoredCondition => {
    if (condition.kind === "timer") {
      if (timerIds.has(condition.timerId)) {
        throw new InvalidDefinitionError(`Step ${stepType} waits on Timer ${condition.timerId} twice; give each Timer its own ID`);
      }
      timerIds.add(condition.timerId);
      return { kind: "timer", timerId: condition.timerId, dueAt: condition.atMs ?? now + (condition.afterMs ?? 0) };
    }
    if (condition.kind === "channel") {
      return { kind: "channel", name: condition.channel.name, key: condition.channel.key, ...storedBound(condition.bound) };
    }
    throw new InvalidDefinitionError(`Step ${stepType} waitUntil returned an unknown condition ${JSON.stringify(condition)}`);
  });
  return { mode: conditions.mode, items };
}
