/**
 * The adapter's conversions without the harness: a JSON Schema as a zod raw
 * shape, the session's harness session ID, and a transcript split into
 * session messages and cut at a deferred call.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { claudeSessionIdOf } from "./claude-session-id.ts";
import { cutAtDeferral, messagesOfEntries, transcriptOf } from "./claude-transcript.ts";
import { zodRawShapeFromJsonSchema } from "./zod-raw-shape.ts";

void test("a JSON Schema object becomes a zod raw shape that checks required and optional fields; a non-object schema is refused", () => {
  const shape = zodRawShapeFromJsonSchema({ type: "object", properties: { order_id: { type: "string" }, note: { type: "string" } }, required: ["order_id"] });
  assert.deepEqual(Object.keys(shape).toSorted(), ["note", "order_id"]);
  const schema = z.object(shape);
  assert.equal(schema.safeParse({ order_id: "7" }).success, true);
  assert.equal(schema.safeParse({ note: "no id" }).success, false);
  assert.equal(schema.safeParse({ order_id: 7 }).success, false);
  assert.throws(() => zodRawShapeFromJsonSchema({ type: "string" }), /does not describe an object/);
});

void test("a session's harness session ID is a stable version 4 UUID of its flow ID", () => {
  const id = claudeSessionIdOf("session-1");
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(claudeSessionIdOf("session-1"), id);
  assert.notEqual(claudeSessionIdOf("session-2"), id);
});

const entries = [
  { type: "user", uuid: "u1", message: { role: "user", content: [{ type: "text", text: "Refund 8 and look up 7." }] } },
  { type: "attachment", uuid: "a1" },
  { type: "assistant", uuid: "m1", message: { id: "msg_1", content: [{ type: "text", text: "On it." }] } },
  { type: "assistant", uuid: "m2", message: { id: "msg_1", content: [{ type: "tool_use", id: "toolu_read", name: "mcp__perdure__lookup_order", input: { order_id: "7" } }] } },
  { type: "user", uuid: "r1", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_read", content: "order 7 shipped" }] } },
  { type: "assistant", uuid: "m3", message: { id: "msg_1", content: [{ type: "tool_use", id: "toolu_write", name: "mcp__perdure__refund_order", input: { order_id: "8" } }] } },
  { type: "user", uuid: "d1", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_write", content: "denied", is_error: true }] } },
  { type: "user", uuid: "i1", message: { role: "user", content: [{ type: "text", text: "[Request interrupted by user for tool use]" }] } },
];

void test("a run cut at its deferred call keeps the response and the harness's own read result, defers the rest, and stores every kept entry once", () => {
  const cut = cutAtDeferral(entries, "toolu_write");
  assert.deepEqual(cut.kept.map((entry) => entry.uuid), ["u1", "a1", "m1", "m2", "r1", "m3"]);
  assert.deepEqual(cut.deferred, [{ id: "toolu_write", name: "mcp__perdure__refund_order", input: { order_id: "8" } }]);
  assert.equal(cut.resumeAt, "m3");
  const messages = messagesOfEntries(cut.kept, (id) => (id === "toolu_read" ? "lookup_order" : "?"));
  assert.deepEqual(messages.map((message) => [message.role, message.text, message.toolName ?? null]), [
    ["assistant", "On it.", null],
    ["tool", "order 7 shipped", "lookup_order"],
    ["assistant", "", null],
  ]);
  const stored = messages.map((message, index) => ({ ...message, sequence: index + 1, turnId: "turn-1", createdAt: "" }));
  assert.deepEqual(transcriptOf(stored).map((entry) => entry.uuid), cut.kept.map((entry) => entry.uuid), "the transcript comes back whole and in order");
});
