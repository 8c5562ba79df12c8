import assert from "node:assert/strict";
import { test } from "node:test";
import { truncateText } from "./truncate-text.ts";

test("truncateText keeps short text, and ends a cut with an ellipsis at a nearby word boundary", () => {
  assert.equal(truncateText("short", 10), "short");
  assert.equal(truncateText("the model provider refused the request", 20), "the model provider…");
  // No space near the end: cut inside the word, still with the ellipsis.
  assert.equal(truncateText("abcdefghijklmnopqrstuvwxyz", 10), "abcdefghi…");
  assert.ok(truncateText("x ".repeat(100), 80).length <= 80);
});
