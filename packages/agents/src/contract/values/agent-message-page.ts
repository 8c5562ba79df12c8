/**
 * One page of `list_agent_messages` and its wire codec, so that a relay
 * (an HTTP route, another language's client) can pass pages on and produce
 * `next_before_sequence` from public exports.
 */
import { agentMessageFromWire, agentMessageToWire, type AgentMessage } from "./agent-message.ts";
import { asWireObject, type WireObject } from "./wire.ts";

/** Output of `list_agent_messages`: oldest first. */
export interface AgentMessagePage {
  messages: AgentMessage[];
  /** Pass as `beforeSequence` for the previous page, or null at the start. */
  nextBeforeSequence: number | null;
  /** The oldest stored sequence once retention deleted earlier messages, else null. */
  deletedBeforeSequence: number | null;
}

function readNullableSequence(object: WireObject, key: string): number | null {
  const value = object[key];
  return typeof value === "number" && Number.isSafeInteger(value) ? value : null;
}

/** The page as wire JSON: `{ messages, next_before_sequence, deleted_before_sequence }`. */
export function agentMessagePageToWire(page: AgentMessagePage): WireObject {
  return {
    messages: page.messages.map(agentMessageToWire),
    next_before_sequence: page.nextBeforeSequence,
    deleted_before_sequence: page.deletedBeforeSequence,
  };
}

/** Reads a page from wire JSON; absent fields read as an empty page's. */
export function agentMessagePageFromWire(data: unknown): AgentMessagePage {
  const object = asWireObject(data, "AgentMessagePage");
  const messages = Array.isArray(object.messages) ? object.messages.map(agentMessageFromWire) : [];
  return { messages, nextBeforeSequence: readNullableSequence(object, "next_before_sequence"), deletedBeforeSequence: readNullableSequence(object, "deleted_before_sequence") };
}
