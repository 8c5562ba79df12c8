/**
 * What a session's message storage holds, read straight from the SQLite
 * file through a read-only connection, and the layout rules every
 * committed state must keep (checked by the message storage tests).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { PrivateEngine } from "../../testing/private-engine.ts";
import { agentMessageChunkFromWire, type AgentMessageChunk } from "../messages/agent-message-chunk.ts";
import { agentMessageIndexFromWire, type AgentMessageIndex } from "../messages/agent-message-index.ts";

/** The rows of one session's message storage. */
export interface StoredMessageLayout {
  index: AgentMessageIndex | undefined;
  /** Sequences of the `AgentMessages` instances, ascending. */
  windowSequences: number[];
  /** `AgentMessageChunks` instances by first sequence, with their stored JSON sizes. */
  chunks: Map<number, { chunk: AgentMessageChunk; bytes: number }>;
}

/** Reads the session's `AgentMessages`, `AgentMessageChunks` and `AgentMessageIndex` rows. */
export function readStoredMessageLayout(engine: PrivateEngine, flowId: string): StoredMessageLayout {
  const database = new DatabaseSync(join(engine.directory, "engine.db"), { readOnly: true });
  try {
    const rows = database.prepare("SELECT name, key, value FROM attributes WHERE flow_id = ? AND name IN ('AgentMessages', 'AgentMessageChunks', 'AgentMessageIndex') ORDER BY name, key")
      .all(flowId) as { name: string; key: string; value: string }[];
    const layout: StoredMessageLayout = { index: undefined, windowSequences: [], chunks: new Map() };
    for (const row of rows) {
      if (row.name === "AgentMessageIndex") layout.index = agentMessageIndexFromWire(JSON.parse(row.value));
      else if (row.name === "AgentMessages") layout.windowSequences.push(Number(row.key));
      else layout.chunks.set(Number(row.key), { chunk: agentMessageChunkFromWire(JSON.parse(row.value)), bytes: Buffer.byteLength(row.value) });
    }
    return layout;
  } finally {
    database.close();
  }
}

/** The storage options a layout check needs. */
export interface LayoutLimits {
  messageChunkSize: number;
  messageChunkMaxBytes: number;
}

/**
 * Throws unless the layout is one the contract allows for `messageCount`
 * messages: the index lists exactly the stored chunks, in order and without
 * overlap; chunks below the window run without gaps from the oldest stored
 * message; each holds its range in order within the limits (an oversized
 * message alone); and the window holds every later message no chunk holds.
 */
export function assertStoredMessageLayout(layout: StoredMessageLayout, messageCount: number, limits: LayoutLimits): void {
  const index = layout.index ?? { chunks: [], firstSequence: 1, windowFirstSequence: 1 };
  if (layout.index === undefined) assert.equal(layout.chunks.size, 0, "no index means no chunks");
  assert.deepEqual([...layout.chunks.keys()].sort((left, right) => left - right), index.chunks.map((chunk) => chunk.firstSequence), "the index lists exactly the stored chunks");
  let expectedFirst = index.firstSequence;
  for (const range of index.chunks) {
    const stored = layout.chunks.get(range.firstSequence)!;
    const sequences = stored.chunk.messages.map((message) => message.sequence);
    assert.deepEqual(sequences, Array.from({ length: range.lastSequence - range.firstSequence + 1 }, (_unused, offset) => range.firstSequence + offset), `chunk ${range.firstSequence} holds its range`);
    if (range.firstSequence < index.windowFirstSequence) {
      assert.equal(range.firstSequence, expectedFirst, `chunk ${range.firstSequence} follows the previous one without a gap`);
      expectedFirst = range.lastSequence + 1;
    } else {
      assert.equal(sequences.length, 1, `chunk ${range.firstSequence} in the window holds one oversized message`);
    }
    assert.ok(sequences.length <= limits.messageChunkSize, `chunk ${range.firstSequence} holds ${sequences.length} messages`);
    assert.ok(sequences.length === 1 || stored.bytes <= limits.messageChunkMaxBytes, `chunk ${range.firstSequence} of ${stored.bytes} bytes is within the byte limit`);
  }
  assert.equal(expectedFirst, index.windowFirstSequence, "the chunks below the window end where the window starts");
  const inChunks = new Set(index.chunks.flatMap((range) => Array.from({ length: range.lastSequence - range.firstSequence + 1 }, (_unused, offset) => range.firstSequence + offset)));
  const expectedWindow: number[] = [];
  for (let sequence = index.windowFirstSequence; sequence <= messageCount; sequence += 1) if (!inChunks.has(sequence)) expectedWindow.push(sequence);
  assert.deepEqual(layout.windowSequences, expectedWindow, "the window holds every later message no chunk holds");
}
