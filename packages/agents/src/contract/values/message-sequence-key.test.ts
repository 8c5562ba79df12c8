/**
 * `messageSequenceKey`: the key of a message's `AgentMessages` instance and
 * of the `AgentMessageChunks` instance that starts with it, 12 digits,
 * zero-padded, so keys sort in sequence order; anything that is not a
 * sequence is refused with its value in the message.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { messageSequenceKey } from "./agent-message.ts";

void test("messageSequenceKey pads a sequence to 12 digits, so the keys sort as the sequences do", () => {
  assert.equal(messageSequenceKey(1), "000000000001");
  assert.equal(messageSequenceKey(2177), "000000002177");
  assert.equal(messageSequenceKey(999_999_999_999), "999999999999");
  const sequences = [10, 9, 100, 1, 33, 32];
  assert.deepEqual(sequences.map(messageSequenceKey).toSorted(), sequences.toSorted((left, right) => left - right).map(messageSequenceKey));
});

void test("messageSequenceKey refuses what is not a message sequence and names the value", () => {
  for (const bad of [0, -1, 1.5, Number.NaN, 1_000_000_000_000]) {
    assert.throws(() => messageSequenceKey(bad), (error: unknown) => error instanceof RangeError && error.message === `message sequence ${String(bad)} is invalid: use an integer from 1 to 999999999999`);
  }
});
