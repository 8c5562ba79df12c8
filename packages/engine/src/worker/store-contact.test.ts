import assert from "node:assert/strict";
import { it } from "node:test";
import { StoreContact } from "./store-contact.ts";

it("a Worker judges others' liveness only after a whole liveness timeout of liveness writes without a gap", () => {
  const contact = new StoreContact(5000);
  assert.equal(contact.judgesLiveness(0), false, "before its first write");
  for (let at = 0; at <= 5000; at += 1000) contact.written(at);
  assert.equal(contact.judgesLiveness(4999), false);
  assert.equal(contact.judgesLiveness(5000), true);
  // The store did not answer for 7 s: others could not write either, so the judging waits again.
  contact.written(12_000);
  assert.equal(contact.judgesLiveness(12_000), false);
  for (let at = 13_000; at <= 17_000; at += 1000) contact.written(at);
  assert.equal(contact.judgesLiveness(16_999), false);
  assert.equal(contact.judgesLiveness(17_000), true);
  // A gap of half the timeout or less is the normal write rhythm with a slow write.
  contact.written(19_500);
  assert.equal(contact.judgesLiveness(19_500), true);
});
