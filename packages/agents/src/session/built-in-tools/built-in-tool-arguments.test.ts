import assert from "node:assert/strict";
import { test } from "node:test";
import { compileArgumentValidator } from "../../stepwise/json-schema-validation.ts";
import { checkAskUserArguments, checkDurableWaitArguments, checkScheduleTurnArguments, checkWriteTodosArguments } from "./built-in-tool-arguments.ts";
import { builtInToolDefinition, builtInToolDefinitions, builtInToolNames } from "../../contract/built-in-tool-definitions.ts";
import { durableWaitTimerId } from "./durable-wait-timer.ts";

test("ask_user arguments: null optionals are absent, free text defaults by choices, and blank text is Python's str.strip() blank", () => {
  assert.deepEqual(checkAskUserArguments('{"question": "Size?", "choices": null, "allows_free_text": null}'), { ok: true, value: { question: "Size?", choices: null, allowsFreeText: true } });
  assert.deepEqual(checkAskUserArguments('{"question": "Size?", "choices": ["S", "M"]}'), { ok: true, value: { question: "Size?", choices: ["S", "M"], allowsFreeText: false } });
  assert.deepEqual(checkAskUserArguments('{"question": "Size?", "choices": ["S"], "allows_free_text": true}'), { ok: true, value: { question: "Size?", choices: ["S"], allowsFreeText: true } });
  assert.deepEqual(checkAskUserArguments('{"question": "\\ufeff"}'), { ok: true, value: { question: "\ufeff", choices: null, allowsFreeText: true } }, "U+FEFF is not Python whitespace");
  const reasons = [
    ["", "question must be a non-blank string, got None"],
    ['{"question": "\\u001f\\u3000"}', "question must be a non-blank string, got '\\x1f\\u3000'"],
    ['{"question": "Q", "choices": []}', "choices must be a non-empty list of strings, got []"],
    ['{"question": "Q", "choices": "S"}', "choices must be a non-empty list of strings, got 'S'"],
    ['{"question": "Q", "choices": ["S", "S"]}', "choices must not repeat"],
    ['{"question": "Q", "allows_free_text": "yes"}', "allows_free_text must be a boolean, got 'yes'"],
    ['{"question": "Q", "tone": "kind"}', "unexpected argument 'tone'"],
    ["[1]", "expected a JSON object, got [1]"],
  ] as const;
  for (const [text, reason] of reasons) assert.deepEqual(checkAskUserArguments(text), { ok: false, reason }, text);
});

test("durable_wait arguments: a whole number of seconds from 1 to the maximum, and a non-blank reason", () => {
  assert.deepEqual(checkDurableWaitArguments('{"duration_seconds": 60, "reason": "cool-down"}', 60), { ok: true, value: { durationSeconds: 60, reason: "cool-down" } });
  assert.deepEqual(checkDurableWaitArguments('{"duration_seconds": 60.0, "reason": "r"}', 60), { ok: true, value: { durationSeconds: 60, reason: "r" } });
  assert.deepEqual(checkDurableWaitArguments('{"duration_seconds": true, "reason": "r"}', 60), { ok: false, reason: "duration_seconds must be a whole number from 1 to 60, got True" });
  assert.deepEqual(checkDurableWaitArguments('{"duration_seconds": null, "reason": "r"}', 60), { ok: false, reason: "duration_seconds must be a whole number from 1 to 60, got None" });
  assert.deepEqual(checkDurableWaitArguments('{"duration_seconds": 5}', 60), { ok: false, reason: "reason must be a non-blank string, got None" });
});

test("write_todos arguments: every task needs content and one of the three statuses", () => {
  assert.deepEqual(checkWriteTodosArguments('{"todos": [{"content": "a", "status": "in_progress"}]}'), { ok: true, value: [{ content: "a", status: "in_progress" }] });
  assert.deepEqual(checkWriteTodosArguments('{"todos": []}'), { ok: true, value: [] });
  assert.deepEqual(checkWriteTodosArguments("{}"), { ok: false, reason: "todos must be a list, got None" });
  assert.deepEqual(checkWriteTodosArguments('{"todos": [{"content": " ", "status": "pending"}]}'), { ok: false, reason: "todos[0].content must be a non-blank string, got ' '" });
  assert.deepEqual(checkWriteTodosArguments('{"todos": ["a"]}'), { ok: false, reason: "todos[0] must be an object, got 'a'" });
});

test("builtInToolDefinitions: frozen, named as the contract, and each schema accepts what its check accepts", () => {
  // The contract's three, then schedule_turn, a Perdure extension.
  assert.deepEqual(builtInToolNames, ["ask_user", "durable_wait", "write_todos", "schedule_turn"]);
  assert.deepEqual(Object.keys(builtInToolDefinitions), builtInToolNames);
  assert.ok(Object.isFrozen(builtInToolDefinitions));
  for (const name of builtInToolNames) {
    const definition = builtInToolDefinition(name);
    assert.equal(definition.name, name);
    assert.ok(definition.description.length > 40);
    assert.ok(Object.isFrozen(definition) && Object.isFrozen(definition.parameters));
    assert.doesNotThrow(() => compileArgumentValidator(definition.parameters as Record<string, unknown>));
  }
  assert.equal(compileArgumentValidator(builtInToolDefinition("ask_user").parameters as Record<string, unknown>)({ question: "Q", choices: null, allows_free_text: null }), null);
  assert.equal(compileArgumentValidator(builtInToolDefinition("durable_wait").parameters as Record<string, unknown>)({ duration_seconds: 5, reason: "r" }), null);
  assert.equal(compileArgumentValidator(builtInToolDefinition("write_todos").parameters as Record<string, unknown>)({ todos: [{ content: "a", status: "pending" }] }), null);
  assert.equal(compileArgumentValidator(builtInToolDefinition("schedule_turn").parameters as Record<string, unknown>)({ text: "check", after_seconds: 60 }), null);
});

test("schedule_turn arguments: non-blank text and exactly one of after_seconds, at and every", () => {
  assert.deepEqual(checkScheduleTurnArguments('{"text": "check", "after_seconds": 60}'), { ok: true, value: { text: "check", afterSeconds: 60, at: null, every: null, timezone: null } });
  assert.deepEqual(checkScheduleTurnArguments('{"text": "check", "every": "0 9 * * *", "timezone": "UTC"}'), { ok: true, value: { text: "check", afterSeconds: null, at: null, every: "0 9 * * *", timezone: "UTC" } });
  assert.deepEqual(checkScheduleTurnArguments('{"text": "check"}'), { ok: false, reason: "give exactly one of after_seconds, at and every, got 0" });
  assert.deepEqual(checkScheduleTurnArguments('{"text": "check", "after_seconds": 5, "at": "2030-01-01T00:00:00Z"}'), { ok: false, reason: "give exactly one of after_seconds, at and every, got 2" });
  assert.deepEqual(checkScheduleTurnArguments('{"text": "check", "after_seconds": 0}'), { ok: false, reason: "after_seconds must be a whole number of at least 1, got 0" });
  assert.deepEqual(checkScheduleTurnArguments('{"text": " ", "after_seconds": 5}'), { ok: false, reason: "text must be a non-blank string, got ' '" });
  assert.deepEqual(checkScheduleTurnArguments('{"text": "c", "every": 5}'), { ok: false, reason: "every must be a cron expression, got 5" });
  assert.deepEqual(checkScheduleTurnArguments('{"text": "c", "at": "x", "mood": 1}'), { ok: false, reason: "unexpected argument 'mood'" });
});

test("durableWaitTimerId keeps what a Timer ID can hold and replaces the rest", () => {
  assert.equal(durableWaitTimerId("call_1.a:b-c"), "durable_wait:call_1.a:b-c");
  assert.equal(durableWaitTimerId("toolu 01/ü"), "durable_wait:toolu_01__");
  assert.equal(durableWaitTimerId("x".repeat(300)).length, 128);
});
