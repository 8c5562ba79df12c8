/**
 * `loadedStoredMessages` (issue 40): in a consistent session the loaded
 * chunks and window already come in sequence order, and the messages are
 * returned without a map and a sort. A half-moved session (a message both in
 * a chunk and still in the window, as a rollover a crash cut short leaves)
 * or messages out of order still get the deduplicated, sorted list, the
 * window's copy kept.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AttributeMapDefinition, AttributeRef, StepContext } from "@perdure/engine";
import { messageSequenceKey, type AgentMessage } from "../../contract/values/agent-message.ts";
import { createAgentSessionPersistence } from "../persistence.ts";
import { loadedStoredMessages } from "./loaded-messages.ts";

const persistence = createAgentSessionPersistence({ eventStreamCapacityBytes: 1_000_000 });

function message(sequence: number, text = `m${sequence}`): AgentMessage {
  return { sequence, role: "user", text, turnId: null, createdAt: "2026-12-07T00:00:00.000Z", frameworkItem: null };
}

/** A context that has loaded these chunks (by first sequence) and window messages. */
function contextWith(chunks: AgentMessage[][], window: AgentMessage[]): StepContext {
  const values = new Map<string, unknown>();
  for (const messages of chunks) values.set(`AgentMessageChunks\u0000${messageSequenceKey(messages[0]!.sequence)}`, { messages });
  for (const stored of window) values.set(`AgentMessages\u0000${messageSequenceKey(stored.sequence)}`, stored);
  const context = {
    read: (ref: AttributeRef<unknown>) => values.get(`${ref.name}\u0000${ref.key}`),
    loadedKeys: (map: AttributeMapDefinition<unknown>) => [...values.keys()].filter((slot) => slot.startsWith(`${map.name}\u0000`)).map((slot) => slot.slice(map.name.length + 1)).sort(),
  };
  return context as unknown as StepContext;
}

const sequences = (messages: readonly AgentMessage[]): number[] => messages.map((stored) => stored.sequence);

test("chunks, then the window, in sequence order", () => {
  const context = contextWith([[message(1), message(2)], [message(3)]], [message(4), message(5)]);
  assert.deepEqual(sequences(loadedStoredMessages(context, persistence)), [1, 2, 3, 4, 5]);
  assert.deepEqual(sequences(loadedStoredMessages(contextWith([], []), persistence)), []);
  assert.deepEqual(sequences(loadedStoredMessages(contextWith([], [message(7), message(8)]), persistence)), [7, 8]);
});

test("a half-moved session: a message in a chunk and still in the window is returned once, the window's copy", () => {
  const context = contextWith([[message(1), message(2), message(3, "chunk copy")]], [message(3, "window copy"), message(4)]);
  const loaded = loadedStoredMessages(context, persistence);
  assert.deepEqual(sequences(loaded), [1, 2, 3, 4]);
  assert.equal(loaded[2]!.text, "window copy");
});

test("messages whose stored sequences do not follow their keys come back sorted by sequence", () => {
  // A chunk keyed by its first sequence that holds them out of order.
  const context = contextWith([[message(2), message(1)]], [message(3)]);
  assert.deepEqual(sequences(loadedStoredMessages(context, persistence)), [1, 2, 3]);
});
