import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { pythonEquals, pythonJsonDumps, pythonJsonLoads, pythonRepr } from "./python-json.ts";

// Expected texts are what CPython 3.11 prints for the same value, except where a row says otherwise.

void describe("pythonJsonDumps", () => {
  const cases: { name: string; value: unknown; expected: string }[] = [
    { name: "Python's separators, keys in insertion order", value: { status: "ok", ids: [1, 2.5], b: 1, a: 2 }, expected: '{"status": "ok", "ids": [1, 2.5], "b": 1, "a": 2}' },
    { name: "empty containers", value: { list: [], dict: {} }, expected: '{"list": [], "dict": {}}' },
    { name: "literals", value: [true, false, null], expected: "[true, false, null]" },
    { name: "non-ASCII kept as UTF-8 (ensure_ascii=False)", value: "café ☕ 😀", expected: '"café ☕ 😀"' },
    { name: "escapes of json.dumps", value: 'line\nbreak "q" \\ \t \u0001 \u007f \u2028', expected: '"line\\nbreak \\"q\\" \\\\ \\t \\u0001 \u007f \u2028"' },
    { name: "a lone surrogate is escaped (Python would write it raw)", value: "\ud800", expected: '"\\ud800"' },
    { name: "a whole-number float is an int (JavaScript cannot tell 1.0 from 1)", value: 1.0, expected: "1" },
    { name: "a large whole number keeps all its digits", value: 1e21, expected: "1000000000000000000000" },
    { name: "negative zero", value: -0, expected: "0" },
    { name: "float repr with a small exponent", value: [1e-7, 1.5e-5, 0.0001, 0.1, 123456.789, -1.5, 2.5e-300], expected: "[1e-07, 1.5e-05, 0.0001, 0.1, 123456.789, -1.5, 2.5e-300]" },
    { name: "non-finite numbers as Python writes them", value: [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY], expected: "[NaN, Infinity, -Infinity]" },
    { name: "a bigint as an int of any size", value: 12345678901234567890n, expected: "12345678901234567890" },
    { name: "undefined, function, and symbol members are dropped", value: { a: undefined, b: 1, c: () => 1, d: Symbol("s") }, expected: '{"b": 1}' },
    { name: "undefined array elements are null", value: [undefined, () => 1], expected: "[null, null]" },
    { name: "undefined itself is null, like a Python function returning None", value: undefined, expected: "null" },
    { name: "toJSON is honoured", value: { at: new Date(Date.UTC(2026, 0, 2)) }, expected: '{"at": "2026-01-02T00:00:00.000Z"}' },
    { name: "boxed primitives are unwrapped", value: [new String("x"), new Number(2), new Boolean(false)], expected: '["x", 2, false]' },
    { name: "a Map has no enumerable members, as with JSON.stringify", value: new Map([["a", 1]]), expected: "{}" },
  ];
  for (const { name, value, expected } of cases) {
    void test(name, () => assert.equal(pythonJsonDumps(value), expected));
  }

  void test("toJSON receives the member's key, as with JSON.stringify", () => {
    const keys: string[] = [];
    const recorder = { toJSON: (key: string) => { keys.push(key); return key; } };
    assert.equal(pythonJsonDumps({ first: recorder, list: [recorder] }), '{"first": "first", "list": ["0"]}');
    assert.deepEqual(keys, ["first", "0"]);
  });

  void test("a circular value throws a TypeError", () => {
    const value: Record<string, unknown> = {};
    value["self"] = value;
    assert.throws(() => pythonJsonDumps(value), TypeError);
  });

  void test("a value repeated without a cycle is written twice", () => {
    const shared = { a: 1 };
    assert.equal(pythonJsonDumps([shared, shared]), '[{"a": 1}, {"a": 1}]');
  });
});

void describe("pythonRepr", () => {
  const cases: { value: unknown; expected: string }[] = [
    { value: "plain", expected: "'plain'" },
    { value: "it's", expected: `"it's"` },
    { value: 'say "hi"', expected: `'say "hi"'` },
    { value: `it's "x"`, expected: `'it\\'s "x"'` },
    { value: "a\nb\r\tc", expected: "'a\\nb\\r\\tc'" },
    { value: "\\", expected: "'\\\\'" },
    { value: "\u0000\u007f\u00a0", expected: "'\\x00\\x7f\\xa0'" },
    { value: "\u200b", expected: "'\\u200b'" },
    { value: "\u{e0001}", expected: "'\\U000e0001'" },
    { value: "\ud800", expected: "'\\ud800'" },
    { value: "é 😀", expected: "'é 😀'" },
    { value: true, expected: "True" },
    { value: false, expected: "False" },
    { value: null, expected: "None" },
    { value: 1.0, expected: "1" },
    { value: 1e-7, expected: "1e-07" },
    { value: 100.5, expected: "100.5" },
    { value: Number.NaN, expected: "nan" },
    { value: Number.NEGATIVE_INFINITY, expected: "-inf" },
    { value: [1, "a", null, [true]], expected: "[1, 'a', None, [True]]" },
    { value: { key: 1.5, "it's": { nested: [] } }, expected: `{'key': 1.5, "it's": {'nested': []}}` },
    { value: { dropped: undefined }, expected: "{}" },
  ];
  for (const { value, expected } of cases) {
    void test(`repr of ${expected}`, () => assert.equal(pythonRepr(value), expected));
  }
});

void describe("pythonEquals", () => {
  const cases: { left: unknown; right: unknown; equal: boolean }[] = [
    { left: true, right: 1, equal: true },
    { left: 1, right: true, equal: true },
    { left: false, right: 0, equal: true },
    { left: true, right: 1.0, equal: true },
    { left: true, right: 2, equal: false },
    { left: true, right: false, equal: false },
    { left: 1, right: 1.0, equal: true },
    { left: "1", right: 1, equal: false },
    { left: "true", right: true, equal: false },
    { left: "", right: 0, equal: false },
    { left: null, right: null, equal: true },
    { left: null, right: 0, equal: false },
    { left: null, right: false, equal: false },
    { left: [1, true], right: [true, 1.0], equal: true },
    { left: [1], right: [1, 1], equal: false },
    { left: [], right: {}, equal: false },
    { left: { a: 1, b: [false] }, right: { b: [0], a: true }, equal: true },
    { left: { a: 1 }, right: { a: 1, b: 2 }, equal: false },
    { left: { a: 1 }, right: { b: 1 }, equal: false },
    { left: { a: undefined }, right: {}, equal: true },
    { left: Number.NaN, right: Number.NaN, equal: false },
    { left: 10n, right: 10, equal: true },
    { left: 10n, right: 10.5, equal: false },
    { left: 1n, right: true, equal: true },
  ];
  for (const { left, right, equal } of cases) {
    void test(`${pythonRepr(left)} == ${pythonRepr(right)} is ${equal}`, () => assert.equal(pythonEquals(left, right), equal));
  }
});

void describe("pythonJsonLoads", () => {
  void test("valid JSON parses", () => {
    assert.deepEqual(pythonJsonLoads('{"a": [1, "x", null]}'), { ok: true, value: { a: [1, "x", null] } });
  });

  const cases: { text: string; message: string }[] = [
    { text: "", message: "Expecting value: line 1 column 1 (char 0)" },
    { text: "   ", message: "Expecting value: line 1 column 4 (char 3)" },
    { text: '{"a": }', message: "Expecting value: line 1 column 7 (char 6)" },
    { text: '{"a" 1}', message: "Expecting ':' delimiter: line 1 column 6 (char 5)" },
    { text: '{"a": 1 "b": 2}', message: "Expecting ',' delimiter: line 1 column 9 (char 8)" },
    { text: "{a: 1}", message: "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)" },
    // Python 3.13's wording; 3.11 says "Expecting property name enclosed in double quotes" at char 8.
    { text: '{"a": 1,}', message: "Illegal trailing comma before end of object: line 1 column 8 (char 7)" },
    // Python 3.13's wording; 3.11 says "Expecting value" at char 6.
    { text: "[1, 2,]", message: "Illegal trailing comma before end of array: line 1 column 6 (char 5)" },
    { text: "[1 2]", message: "Expecting ',' delimiter: line 1 column 4 (char 3)" },
    { text: '{"a": "x', message: "Unterminated string starting at: line 1 column 7 (char 6)" },
    { text: '"abc\\', message: "Unterminated string starting at: line 1 column 1 (char 0)" },
    { text: '"\\x"', message: "Invalid \\escape: line 1 column 2 (char 1)" },
    { text: '"\\u12"', message: "Invalid \\uXXXX escape: line 1 column 3 (char 2)" },
    { text: '"\\ud800\\u12zz"', message: "Invalid \\uXXXX escape: line 1 column 9 (char 8)" },
    { text: '"a\tb"', message: "Invalid control character at: line 1 column 3 (char 2)" },
    { text: '{"a": 1} x', message: "Extra data: line 1 column 10 (char 9)" },
    { text: '"\\u00e9" 1', message: "Extra data: line 1 column 10 (char 9)" },
    { text: "[1, 2", message: "Expecting ',' delimiter: line 1 column 6 (char 5)" },
    { text: "[", message: "Expecting value: line 1 column 2 (char 1)" },
    { text: "{", message: "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)" },
    { text: '{"a":1,"b":[1,{"c":}]}', message: "Expecting value: line 1 column 20 (char 19)" },
    { text: "nul", message: "Expecting value: line 1 column 1 (char 0)" },
    { text: "01", message: "Extra data: line 1 column 2 (char 1)" },
    { text: "1.", message: "Extra data: line 1 column 2 (char 1)" },
    { text: "-", message: "Expecting value: line 1 column 1 (char 0)" },
    { text: '{\n  "a": 1,\n  "b": tru\n}', message: "Expecting value: line 3 column 8 (char 19)" },
    { text: '{"é😀": x}', message: "Expecting value: line 1 column 8 (char 7)" },
    { text: "\ufeff{}", message: "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)" },
    // Python reads NaN; JSON and JavaScript do not.
    { text: "NaN", message: "Expecting value: line 1 column 1 (char 0)" },
  ];
  for (const { text, message } of cases) {
    void test(`${JSON.stringify(text)} fails with ${message}`, () => assert.deepEqual(pythonJsonLoads(text), { ok: false, message }));
  }

  void test("deeply nested invalid text reports its error without overflowing the stack", () => {
    const text = `${"[".repeat(200_000)}x`;
    assert.deepEqual(pythonJsonLoads(text), { ok: false, message: "Expecting value: line 1 column 200001 (char 200000)" });
  });
});
