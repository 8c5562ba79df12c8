import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compileArgumentValidator, parseToolArguments } from "./json-schema-validation.ts";
import type { JsonSchema } from "./model-client.ts";

// These messages reach the model as tool failures: each row pins one exactly.
// Unless a row says otherwise, the text is what Python's `jsonschema` 4.26
// gives as `best_match(...).message` for the same schema and value.

const orderSchema: JsonSchema = {
  type: "object",
  properties: {
    order_id: { type: "string" },
    quantity: { type: "integer", minimum: 1 },
  },
  required: ["order_id", "quantity"],
  additionalProperties: false,
};

const lineItemsSchema: JsonSchema = {
  type: "object",
  properties: {
    items: {
      type: "array",
      items: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
    },
  },
};

interface ValidationCase { name: string; schema: JsonSchema; value: unknown; message: string | null }

const validationCases: ValidationCase[] = [
  // required
  { name: "a missing required property", schema: orderSchema, value: { quantity: 1 }, message: "'order_id' is a required property" },
  { name: "valid arguments", schema: orderSchema, value: { order_id: "A-1", quantity: 2 }, message: null },

  // type, for each JSON type
  { name: "string", schema: { type: "string" }, value: 5, message: "5 is not of type 'string'" },
  { name: "string given null", schema: { type: "string" }, value: null, message: "None is not of type 'string'" },
  { name: "integer given a fraction", schema: { type: "integer" }, value: 1.5, message: "1.5 is not of type 'integer'" },
  { name: "integer given a whole-number float", schema: { type: "integer" }, value: 2.0, message: null },
  { name: "integer given a boolean", schema: { type: "integer" }, value: true, message: "True is not of type 'integer'" },
  { name: "number given a numeric string", schema: { type: "number" }, value: "1", message: "'1' is not of type 'number'" },
  { name: "number given a boolean", schema: { type: "number" }, value: false, message: "False is not of type 'number'" },
  { name: "boolean given 1", schema: { type: "boolean" }, value: 1, message: "1 is not of type 'boolean'" },
  { name: "null given 0", schema: { type: "null" }, value: 0, message: "0 is not of type 'null'" },
  { name: "array given an object", schema: { type: "array" }, value: { a: 1 }, message: "{'a': 1} is not of type 'array'" },
  { name: "object given an array", schema: { type: "object" }, value: [1, "a"], message: "[1, 'a'] is not of type 'object'" },
  { name: "a list of types", schema: { type: ["string", "null"] }, value: 1, message: "1 is not of type 'string', 'null'" },

  // enum, with Python's == (jsonschema itself would refuse True for 1; the contract asks for ==)
  { name: "enum of strings", schema: { enum: ["a", "b"] }, value: "x", message: "'x' is not one of ['a', 'b']" },
  { name: "enum: true matches 1", schema: { enum: [1, 2] }, value: true, message: null },
  { name: "enum: 1 matches true", schema: { enum: [true] }, value: 1, message: null },
  { name: "enum: false matches 0", schema: { enum: [0] }, value: false, message: null },
  { name: "enum: 1.0 matches 1", schema: { enum: [1] }, value: 1.0, message: null },
  { name: "enum: '1' does not match 1", schema: { enum: [1] }, value: "1", message: "'1' is not one of [1]" },
  { name: "enum: None does not match 0", schema: { enum: [null] }, value: 0, message: "0 is not one of [None]" },
  { name: "enum of containers compares elementwise", schema: { enum: [[1, 2], { a: 1 }] }, value: [true, 2], message: null },
  { name: "enum of containers, no match", schema: { enum: [[1, 2], { a: 1 }] }, value: { a: 2 }, message: "{'a': 2} is not one of [[1, 2], {'a': 1}]" },

  // const
  { name: "const string", schema: { const: "a" }, value: "b", message: "'a' was expected" },
  { name: "const false given None", schema: { const: false }, value: null, message: "False was expected" },
  { name: "const: true matches 1", schema: { const: 1 }, value: true, message: null },
  { name: "const object compares with ==", schema: { const: { a: [1] } }, value: { a: [1.0] }, message: null },

  // additionalProperties
  { name: "one additional property", schema: orderSchema, value: { order_id: "A", quantity: 1, extra: 2 }, message: "Additional properties are not allowed ('extra' was unexpected)" },
  { name: "several additional properties, sorted", schema: orderSchema, value: { order_id: "A", quantity: 1, zeta: 1, beta: 2 }, message: "Additional properties are not allowed ('beta', 'zeta' were unexpected)" },
  {
    name: "additional properties next to patternProperties",
    schema: { type: "object", patternProperties: { "^x-": {}, "^y-": {} }, additionalProperties: false },
    value: { "x-a": 1, b: 2 },
    message: "'b' does not match any of the regexes: '^x-', '^y-'",
  },
  {
    name: "additionalProperties as a schema",
    schema: { type: "object", additionalProperties: { type: "integer" } },
    value: { count: "s" },
    message: "at $.count: 's' is not of type 'integer'",
  },

  // numbers
  { name: "minimum", schema: { minimum: 5 }, value: 3, message: "3 is less than the minimum of 5" },
  { name: "maximum", schema: { maximum: 5 }, value: 7.5, message: "7.5 is greater than the maximum of 5" },
  { name: "exclusiveMinimum", schema: { exclusiveMinimum: 5 }, value: 5, message: "5 is less than or equal to the minimum of 5" },
  { name: "exclusiveMaximum", schema: { exclusiveMaximum: 5 }, value: 5, message: "5 is greater than or equal to the maximum of 5" },
  { name: "multipleOf", schema: { multipleOf: 2 }, value: 5, message: "5 is not a multiple of 2" },
  { name: "multipleOf a fraction", schema: { multipleOf: 0.5 }, value: 0.3, message: "0.3 is not a multiple of 0.5" },

  // strings
  { name: "minLength", schema: { minLength: 5 }, value: "ab", message: "'ab' is too short" },
  { name: "minLength 1", schema: { minLength: 1 }, value: "", message: "'' should be non-empty" },
  { name: "maxLength", schema: { maxLength: 2 }, value: "abc", message: "'abc' is too long" },
  { name: "maxLength 0", schema: { maxLength: 0 }, value: "a", message: "'a' is expected to be empty" },
  { name: "length counts code points", schema: { maxLength: 1 }, value: "😀", message: null },
  { name: "pattern", schema: { pattern: "^[A-Z]-\\d+$" }, value: "a-1", message: "'a-1' does not match '^[A-Z]-\\\\d+$'" },
  { name: "pattern searches, unanchored", schema: { pattern: "\\d" }, value: "a1b", message: null },
  { name: "format is not checked", schema: { format: "email" }, value: "not an email", message: null },

  // arrays, with paths
  { name: "an item's property", schema: lineItemsSchema, value: { items: [{ sku: "a" }, { sku: 5 }] }, message: "at $.items[1].sku: 5 is not of type 'string'" },
  { name: "an item's required property", schema: lineItemsSchema, value: { items: [{ name: "a" }] }, message: "at $.items[0]: 'sku' is a required property" },
  { name: "minItems", schema: { minItems: 2 }, value: [1], message: "[1] is too short" },
  { name: "minItems 1", schema: { minItems: 1 }, value: [], message: "[] should be non-empty" },
  { name: "maxItems", schema: { maxItems: 1 }, value: [1, 2], message: "[1, 2] is too long" },
  { name: "uniqueItems", schema: { uniqueItems: true }, value: [1, 2, 1], message: "[1, 2, 1] has non-unique elements" },
  { name: "prefixItems then no more items", schema: { prefixItems: [{ type: "string" }], items: false }, value: ["a", 1, 2], message: "Expected at most 1 item but found 2 extra: [1, 2]" },
  { name: "one item too many", schema: { prefixItems: [{}, {}], items: false }, value: [1, 2, "c"], message: "Expected at most 2 items but found 1 extra: 'c'" },
  { name: "contains", schema: { contains: { type: "string" } }, value: [1, 2], message: "[1, 2] does not contain items matching the given schema" },
  { name: "minContains", schema: { contains: { type: "string" }, minContains: 3 }, value: ["a", 1, "b", 2], message: "Too few items match the given schema (expected at least 3 but only 2 matched)" },
  { name: "minContains with no match", schema: { contains: { type: "string" }, minContains: 2 }, value: [1, 2], message: "[1, 2] does not contain items matching the given schema" },
  { name: "maxContains", schema: { contains: { type: "string" }, maxContains: 1 }, value: ["a", 1, "b", "c"], message: "Too many items match the given schema (expected at most 1)" },

  // nested objects
  {
    name: "a nested object's property",
    schema: { type: "object", properties: { customer: { type: "object", properties: { address: { type: "object", properties: { zip: { type: "string", minLength: 5 } } } } } } },
    value: { customer: { address: { zip: "123" } } },
    message: "at $.customer.address.zip: '123' is too short",
  },
  {
    name: "keys that are not identifiers",
    schema: { type: "object", properties: { "ship to": { type: "object", properties: { "a/b": { type: "integer" } } } } },
    value: { "ship to": { "a/b": "x" } },
    message: "at $['ship to']['a/b']: 'x' is not of type 'integer'",
  },
  {
    name: "a recursive $ref",
    schema: { $defs: { node: { type: "object", properties: { value: { type: "integer" }, next: { $ref: "#/$defs/node" } } } }, $ref: "#/$defs/node" },
    value: { next: { next: { value: "x" } } },
    message: "at $.next.next.value: 'x' is not of type 'integer'",
  },
  // Our choice: jsonschema gives a false subschema's error no path.
  { name: "a false subschema", schema: { type: "object", properties: { legacy: false } }, value: { legacy: 1 }, message: "at $.legacy: False schema does not allow 1" },
  { name: "dependentRequired", schema: { dependentRequired: { card: ["cvv"] } }, value: { card: "x" }, message: "'cvv' is a dependency of 'card'" },
  { name: "propertyNames", schema: { propertyNames: { pattern: "^[a-z]+$" } }, value: { ok: 1, Bad: 2 }, message: "'Bad' does not match '^[a-z]+$'" },
  { name: "if/then", schema: { if: { type: "string" }, then: { minLength: 3 } }, value: "a", message: "'a' is too short" },
  { name: "required is an own property, not an inherited one", schema: { type: "object", required: ["toString"] }, value: {}, message: "'toString' is a required property" },

  // anyOf, oneOf, not
  { name: "anyOf", schema: { anyOf: [{ type: "string" }, { type: "integer" }] }, value: 1.5, message: "1.5 is not valid under any of the given schemas" },
  {
    name: "a nested anyOf",
    schema: { type: "object", properties: { amount: { anyOf: [{ type: "string" }, { type: "integer" }] } } },
    value: { amount: 1.5 },
    message: "at $.amount: 1.5 is not valid under any of the given schemas",
  },
  {
    // Our choice: jsonschema's best_match would descend to "{'a': 1} is not of type 'string'".
    name: "anyOf through $ref reports the anyOf, not a branch's error",
    schema: { $defs: { text: { type: "string" }, code: { type: "object", required: ["code"] } }, anyOf: [{ $ref: "#/$defs/text" }, { $ref: "#/$defs/code" }] },
    value: { a: 1 },
    message: "{'a': 1} is not valid under any of the given schemas",
  },
  { name: "anyOf that passes", schema: { anyOf: [{ type: "string" }, { type: "integer" }] }, value: 2, message: null },
  { name: "oneOf with no match", schema: { oneOf: [{ type: "string" }, { type: "boolean" }] }, value: 1, message: "1 is not valid under any of the given schemas" },
  { name: "oneOf with two matches", schema: { oneOf: [{ type: "number" }, { type: "integer" }] }, value: 1, message: "1 is valid under each of {'type': 'integer'}, {'type': 'number'}" },
  { name: "not", schema: { not: { type: "string" } }, value: "a", message: "'a' should not be valid under {'type': 'string'}" },

  // several errors: the shallowest, then a type error, then Ajv's order
  { name: "a missing property before an additional one", schema: orderSchema, value: { quantity: 0, note: "x" }, message: "'order_id' is a required property" },
  { name: "a top-level error before a nested one", schema: orderSchema, value: { order_id: 5 }, message: "'quantity' is a required property" },
  { name: "a type error before another error at the same depth", schema: orderSchema, value: { quantity: 0, order_id: 5 }, message: "at $.order_id: 5 is not of type 'string'" },
  { name: "the type before the enum of the same value", schema: { type: "string", enum: ["a"], minLength: 3 }, value: 5, message: "5 is not of type 'string'" },
  { name: "properties in schema order", schema: { type: "object", properties: { a: { minimum: 1 }, b: { minimum: 1 } } }, value: { b: 0, a: 0 }, message: "at $.a: 0 is less than the minimum of 1" },
  { name: "items in index order", schema: { items: { type: "string" } }, value: ["ok", 1, 2], message: "at $[1]: 1 is not of type 'string'" },
  { name: "anyOf after a sibling error at the same depth", schema: { type: "object", required: ["a"], anyOf: [{ required: ["b"] }, { required: ["c"] }] }, value: {}, message: "'a' is a required property" },
];

void describe("compileArgumentValidator messages", () => {
  for (const { name, schema, value, message } of validationCases) {
    void test(`${name}: ${message ?? "valid"}`, () => assert.equal(compileArgumentValidator(schema)(value), message));
  }
});

void describe("compileArgumentValidator dialects", () => {
  void test("a draft-07 schema uses draft-07's tuple items and additionalItems", () => {
    const schema = { $schema: "http://json-schema.org/draft-07/schema#", items: [{ type: "string" }], additionalItems: false };
    assert.equal(compileArgumentValidator(schema)(["a", 1, true]), "Additional items are not allowed (1, True were unexpected)");
  });

  void test("a draft-07 schema with definitions and $id compiles, and twice with the same $id", () => {
    const makeSchema = (): JsonSchema => ({
      $schema: "http://json-schema.org/draft-07/schema#",
      $id: "https://example.com/order.json",
      definitions: { id: { type: "string" } },
      type: "object",
      properties: { order_id: { $ref: "#/definitions/id" } },
    });
    assert.equal(compileArgumentValidator(makeSchema())({ order_id: 1 }), "at $.order_id: 1 is not of type 'string'");
    assert.equal(compileArgumentValidator(makeSchema())({ order_id: 2 }), "at $.order_id: 2 is not of type 'string'");
  });

  void test("a 2019-09 schema compiles with its own dialect", () => {
    const schema = { $schema: "https://json-schema.org/draft/2019-09/schema", type: "object", unevaluatedProperties: false, properties: { a: {} } };
    assert.equal(compileArgumentValidator(schema)({ a: 1, c: 2, b: 3 }), "Unevaluated properties are not allowed ('b', 'c' were unexpected)");
  });

  void test("an unknown $schema is read as 2020-12, as jsonschema does", () => {
    const schema = { $schema: "https://example.com/my-dialect", prefixItems: [{ type: "string" }], items: false };
    assert.equal(compileArgumentValidator(schema)(["a", "b"]), "Expected at most 1 item but found 1 extra: 'b'");
  });
});

void describe("compileArgumentValidator with an invalid schema", () => {
  const cases: { name: string; schema: JsonSchema; message: string | RegExp }[] = [
    { name: "an unknown type", schema: { type: "strin" }, message: "invalid JSON Schema for tool arguments: at $.type: 'strin' is not valid under any of the given schemas" },
    { name: "a nested bad keyword value", schema: { type: "object", properties: { x: { minLength: -1 } } }, message: "invalid JSON Schema for tool arguments: at $.properties.x.minLength: -1 is less than the minimum of 0" },
    { name: "an enum that is not a list", schema: { enum: 5 }, message: "invalid JSON Schema for tool arguments: at $.enum: 5 is not of type 'array'" },
    { name: "a $ref to nothing", schema: { $ref: "#/$defs/missing" }, message: "invalid JSON Schema for tool arguments: can't resolve reference #/$defs/missing from id #" },
    { name: "a pattern JavaScript cannot compile", schema: { pattern: "(?P<name>a)" }, message: /^invalid JSON Schema for tool arguments: Invalid regular expression: / },
    { name: "draft-04", schema: { $schema: "http://json-schema.org/draft-04/schema#" }, message: "invalid JSON Schema for tool arguments: $schema 'http://json-schema.org/draft-04/schema#' is not supported; use draft-07 or 2020-12" },
    { name: "a $schema that is not a string", schema: { $schema: 7 }, message: "invalid JSON Schema for tool arguments: $schema must be a string, got 7" },
    { name: "not an object", schema: [] as unknown as JsonSchema, message: "invalid JSON Schema for tool arguments: the schema must be a JSON object, got []" },
  ];
  for (const { name, schema, message } of cases) {
    void test(`${name} throws a TypeError`, () => {
      assert.throws(() => compileArgumentValidator(schema), (error: unknown) => {
        assert.ok(error instanceof TypeError);
        if (typeof message === "string") assert.equal(error.message, message);
        else assert.match(error.message, message);
        return true;
      });
    });
  }
});

void describe("compileArgumentValidator caching", () => {
  void test("the same schema object gets the same validator", () => {
    const schema: JsonSchema = { type: "object" };
    assert.equal(compileArgumentValidator(schema), compileArgumentValidator(schema));
  });

  void test("a validator keeps working after many other schemas were compiled", () => {
    const first = compileArgumentValidator({ type: "object", required: ["a"] });
    for (let index = 0; index < 250; index += 1) {
      assert.equal(compileArgumentValidator({ type: "object", properties: { n: { minimum: index } } })({ n: -1 }), `at $.n: -1 is less than the minimum of ${index}`);
    }
    assert.equal(first({}), "'a' is a required property");
  });

  void test("compiling and validating change neither the schema nor the arguments", () => {
    const schema: JsonSchema = { $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { a: { type: "string", default: "x" } } };
    const schemaBefore = structuredClone(schema);
    const argumentsValue = {};
    assert.equal(compileArgumentValidator(schema)(argumentsValue), null);
    assert.deepEqual(schema, schemaBefore);
    assert.deepEqual(argumentsValue, {});
  });
});

void describe("parseToolArguments", () => {
  const cases: { name: string; text: string; schema: JsonSchema; expected: ReturnType<typeof parseToolArguments> }[] = [
    { name: "valid arguments", text: '{"order_id": "A-1", "quantity": 2}', schema: orderSchema, expected: { ok: true, value: { order_id: "A-1", quantity: 2 } } },
    { name: "a mismatch", text: '{"order_id": 5, "quantity": 2}', schema: orderSchema, expected: { ok: false, message: "at $.order_id: 5 is not of type 'string'" } },
    { name: "invalid JSON", text: '{"order_id": }', schema: orderSchema, expected: { ok: false, message: "Invalid JSON arguments: Expecting value: line 1 column 14 (char 13)" } },
    { name: "truncated JSON", text: '{"order_id": "A-1", "quant', schema: orderSchema, expected: { ok: false, message: "Invalid JSON arguments: Unterminated string starting at: line 1 column 21 (char 20)" } },
    { name: "an array", text: "[1, 2]", schema: orderSchema, expected: { ok: false, message: "[1, 2] is not of type 'object'" } },
    { name: "a string", text: '"A-1"', schema: orderSchema, expected: { ok: false, message: "'A-1' is not of type 'object'" } },
    { name: "a number", text: "7", schema: {}, expected: { ok: false, message: "7 is not of type 'object'" } },
    { name: "null is no arguments", text: "null", schema: { type: "object", properties: {} }, expected: { ok: true, value: {} } },
    { name: "null is no arguments, which the schema may require", text: "null", schema: orderSchema, expected: { ok: false, message: "'order_id' is a required property" } },
    { name: "empty text is no arguments", text: "", schema: { type: "object" }, expected: { ok: true, value: {} } },
    { name: "blank text is no arguments", text: " \n\t", schema: { type: "object" }, expected: { ok: true, value: {} } },
  ];
  for (const { name, text, schema, expected } of cases) {
    void test(`${name}: ${JSON.stringify(text)}`, () => assert.deepEqual(parseToolArguments(text, schema), expected));
  }

  void test("an invalid schema throws whatever the arguments", () => {
    assert.throws(() => parseToolArguments("not json", { type: "strin" }), TypeError);
  });
});
