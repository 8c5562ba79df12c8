import assert from "node:assert/strict";
import { it } from "node:test";
import { describeMessageStorage } from "./message-storage-view.ts";

it("the inspector's message storage view counts the window, lists chunks and marks oversized ones and deleted history", () => {
  assert.deepEqual(describeMessageStorage(undefined, 40), { hasIndex: false, windowFirstSequence: 1, windowMessageCount: 40, chunks: [], deletedBeforeSequence: null });
  const view = describeMessageStorage({ chunks: [{ firstSequence: 33, lastSequence: 64 }, { firstSequence: 70, lastSequence: 70 }], firstSequence: 33, windowFirstSequence: 65 }, 100);
  assert.equal(view.windowMessageCount, 35, "36 messages from 65, one of them in its own chunk");
  assert.deepEqual(view.chunks.map((chunk) => [chunk.firstSequence, chunk.messageCount, chunk.isOversized]), [[33, 32, false], [70, 1, true]]);
  assert.equal(view.deletedBeforeSequence, 33);
});
