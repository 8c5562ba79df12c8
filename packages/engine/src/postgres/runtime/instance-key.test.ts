import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeInstanceKey, encodeInstanceKey } from "./instance-key.ts";

const keys = ["", "a", "a\u0000", "a\u0000b", "a\u0001", "a\u0001\u0000", "a\u0002", "\u0000", "\u0001", "\u0001\u0001", "b", "é", "ab\u0000\u0000"];

/** Byte order of the UTF-8 encoding: how PostgreSQL's "C" collation and SQLite compare. */
function byteOrder(left: string, right: string): number {
  return Buffer.compare(Buffer.from(left), Buffer.from(right));
}

test("instance keys with U+0000 are stored without it, round-trip, and keep their byte order", () => {
  for (const key of keys) {
    const stored = encodeInstanceKey(key);
    assert.ok(!stored.includes("\u0000"), `${JSON.stringify(key)} stored as ${JSON.stringify(stored)}`);
    assert.equal(decodeInstanceKey(stored), key);
  }
  for (const left of keys) {
    for (const right of keys) {
      assert.equal(Math.sign(byteOrder(encodeInstanceKey(left), encodeInstanceKey(right))), Math.sign(byteOrder(left, right)), `${JSON.stringify(left)} vs ${JSON.stringify(right)}`);
    }
  }
});
