import assert from "node:assert/strict";
import { test } from "node:test";
import { devStartingText, errorTextOf, isDisconnect } from "./chat-errors.ts";

test("the chat reconnects after a network failure or while perdure dev starts again, and reports other answers as the turn's failure", () => {
  assert.equal(isDisconnect(new TypeError("Failed to fetch")), true);
  assert.equal(isDisconnect(new Error("network error")), true);
  // The transport passes the 503's JSON body on as the message: the restart's answer is not the turn failing.
  const starting = new Error(JSON.stringify({ error: devStartingText }));
  assert.equal(errorTextOf(starting), "perdure dev is starting; retry shortly");
  assert.equal(isDisconnect(starting), true);
  assert.equal(isDisconnect(new Error(JSON.stringify({ error: "the model call failed" }))), false);
  assert.equal(isDisconnect(new Error("perdure dev is starting; retry shortly, or not")), false);
  assert.equal(isDisconnect(undefined), false);
});
