import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";
import * as v from "valibot";
import { z } from "zod";
import { startSessionHarness } from "../session/test-fixtures/session-harness.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { createStepwiseAgentSessionFlow } from "./create-stepwise-agent-session-flow.ts";
import { functionTool, type FunctionTool } from "./function-tool.ts";
import { parseFunctionToolArguments } from "./function-tool-arguments.ts";
import { ScriptedModelClient } from "./scripted-model-client.ts";

const noop = () => "ok";

describe("functionTool with a Standard Schema", () => {
  it("types execute's argument from a zod 4 schema and offers zod's own JSON Schema", async () => {
    const schema = z.object({ day: z.string().describe("An ISO date."), guests: z.number().int().min(1).default(2) });
    const tool = functionTool({
      name: "book_table", description: "Book a table.", parameters: schema, effect: "idempotent_write",
      execute: (argumentsValue) => {
        const typed: [string, number] = [argumentsValue.day, argumentsValue.guests];
        // @ts-expect-error `time` is not a property of the zod schema's output
        const wrong: unknown = argumentsValue.time;
        return [typed, wrong];
      },
    });
    assert.deepEqual(tool.parameters, z.toJSONSchema(schema, { io: "input" }));
    assert.equal(tool.argumentsSchema, schema);
    // The schema's output reaches execute: its default filled in.
    assert.deepEqual(await parseFunctionToolArguments(tool, '{"day": "2026-12-24"}'), { ok: true, value: { day: "2026-12-24", guests: 2 } });
    assert.deepEqual(await parseFunctionToolArguments(tool, '{"day": 5}'), { ok: false, message: "at $.day: Invalid input: expected string, received number" });
    // Before the schema: the contract's own messages for text that is not a JSON object.
    assert.deepEqual(await parseFunctionToolArguments(tool, "[1, 2]"), { ok: false, message: "[1, 2] is not of type 'object'" });
    assert.deepEqual(await parseFunctionToolArguments(tool, "{"), { ok: false, message: "Invalid JSON arguments: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)" });
  });

  it("types execute's argument from a valibot schema wrapped with its converter, and offers the converter's JSON Schema", async () => {
    const schema = toStandardJsonSchema(v.object({ order_id: v.pipe(v.string(), v.minLength(4)) }));
    const tool = functionTool({
      name: "lookup_order", description: "Look up an order.", parameters: schema, effect: "read",
      execute: (argumentsValue) => {
        // @ts-expect-error `orderId` is not a property of the valibot schema's output (`order_id` is)
        const wrong: unknown = argumentsValue.orderId;
        return [argumentsValue.order_id.toUpperCase(), wrong];
      },
    });
    assert.deepEqual(tool.parameters, {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object", properties: { order_id: { type: "string", minLength: 4 } }, required: ["order_id"],
    });
    assert.deepEqual(await parseFunctionToolArguments(tool, '{"order_id": "1001"}'), { ok: true, value: { order_id: "1001" } });
    assert.deepEqual(await parseFunctionToolArguments(tool, '{"order_id": "1"}'), { ok: false, message: "at $.order_id: Invalid length: Expected >=4 but received 1" });
  });

  it("types execute's argument from an arktype schema and reports arktype's issue", async () => {
    const tool = functionTool({
      name: "count", description: "Count.", parameters: type({ items: "string[]" }), effect: "read",
      execute: ({ items }) => items.length,
    });
    assert.deepEqual(tool.parameters, {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object", properties: { items: { type: "array", items: { type: "string" } } }, required: ["items"],
    });
    assert.deepEqual(await parseFunctionToolArguments(tool, '{"items": ["a", 2]}'), { ok: false, message: "at $.items[1]: items[1] must be a string (was a number)" });
  });

  it("refuses, when built, a raw valibot schema (no JSON Schema converter) and a schema whose root is not an object", () => {
    assert.throws(
      () => functionTool({ name: "raw", description: "", parameters: v.object({ a: v.string() }), execute: noop }),
      { name: "InvalidInputError", message: 'tool raw parameters: the valibot schema cannot convert itself to JSON Schema for the model; wrap it with toStandardJsonSchema from "@valibot/to-json-schema"' },
    );
    assert.throws(
      () => functionTool({ name: "scalar", description: "", parameters: z.string(), execute: noop }),
      { name: "InvalidInputError", message: `tool scalar parameters: at $.type: the root must be { "type": "object" } (the arguments are a JSON object), found 'string'` },
    );
    assert.throws(
      () => functionTool({ name: "unconvertible", description: "", parameters: z.object({ when: z.date() }), execute: noop }),
      { name: "InvalidInputError", message: /^tool unconvertible parameters: zod could not convert the schema to JSON Schema: / },
    );
  });
});

describe("functionTool with a JSON Schema", () => {
  const cases: { name: string; parameters: Record<string, unknown>; message: string | RegExp }[] = [
    { name: "an unknown type", parameters: { type: "object", properties: { day: { type: "strin" } } }, message: "tool t parameters: at $.properties.day.type: 'strin' is not a JSON Schema type; use one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'" },
    { name: "an unknown type in a list, deep in an array's items", parameters: { type: "object", properties: { days: { type: "array", items: { anyOf: [{ type: ["string", "nul"] }] } } } }, message: /^tool t parameters: at \$\.properties\.days\.items\.anyOf\[0\]\.type\[1\]: 'nul' is not a JSON Schema type/ },
    { name: "properties without a root type", parameters: { properties: { day: { type: "string" } } }, message: `tool t parameters: at $.type: the root must be { "type": "object" } (the arguments are a JSON object), found no type` },
    { name: "a root that is an array", parameters: { type: "array" }, message: /^tool t parameters: at \$\.type: the root must be .* found 'array'$/ },
    { name: "a bad keyword value", parameters: { type: "object", properties: { day: { type: "string", minLength: "3" } } }, message: "tool t parameters: invalid JSON Schema: at $.properties.day.minLength: '3' is not of type 'integer'" },
    { name: "a $ref to nothing", parameters: { type: "object", properties: { day: { $ref: "#/$defs/missing" } } }, message: "tool t parameters: invalid JSON Schema: can't resolve reference #/$defs/missing from id #" },
  ];
  for (const { name, parameters, message } of cases) {
    it(`refuses ${name} when the tool is built, naming the tool and the path`, () => {
      assert.throws(() => functionTool({ name: "t", description: "", parameters, execute: noop }), { name: "InvalidInputError", message });
    });
  }

  it("accepts a property named type and data that looks like a bad type (in default, enum, const)", () => {
    const tool = functionTool({
      name: "t", description: "", execute: noop,
      parameters: { type: "object", properties: { type: { type: "string", enum: ["strin"] }, extra: { default: { type: "strin" }, const: { type: "nope" } } } },
    });
    assert.equal(tool.argumentsSchema, undefined);
  });
});

describe("a Standard Schema tool in a session", () => {
  it("the model is offered the generated JSON Schema, a bad argument is a tool failure, and a good one runs with the parsed value", async () => {
    const runs: { day: string }[] = [];
    const tool: FunctionTool<{ day: string }> = functionTool({
      name: "get_day", description: "Plans for a day.", parameters: z.object({ day: z.string() }), effect: "read",
      execute: (argumentsValue) => { runs.push(argumentsValue); return `nothing on ${argumentsValue.day}`; },
    });
    const model = new ScriptedModelClient((request) => {
      const results = ScriptedModelClient.toolResults(request);
      if (results.length > 0) return { text: results.map((result) => result.output).join(" | ") };
      return { toolCalls: [{ name: "get_day", arguments: { day: 24 } }, { name: "get_day", arguments: { day: "Monday" } }] };
    });
    const flow = createStepwiseAgentSessionFlow({ name: "days", instructions: "Plan.", model, tools: [tool] }, "StandardSchemaDays");
    const harness = await startSessionHarness([flow]);
    const sessions = new AgentSessionTestClient(harness.client, flow);
    try {
      await sessions.start("s1", { initialMessage: "what is on?" });
      await sessions.waitForTurnCount("s1", 1);
      assert.deepEqual(model.requests[0]?.tools, [{ name: "get_day", description: "Plans for a day.", parameters: z.toJSONSchema(z.object({ day: z.string() }), { io: "input" }) }]);
      const snapshot = await sessions.getAgentSnapshot("s1");
      assert.equal(snapshot.messages.at(-1)?.text, "The tool call failed: at $.day: Invalid input: expected string, received number | nothing on Monday");
      assert.deepEqual(runs, [{ day: "Monday" }]);
    } finally {
      await harness.dispose();
    }
  });
});

describe("functionTool with zod's generated JSON Schema object", () => {
  it("treats a plain JSON Schema object that carries a hidden ~standard (z.toJSONSchema's output, as the AI SDK passes it) as JSON Schema", async () => {
    const jsonSchema = z.toJSONSchema(z.object({ order_id: z.string() }));
    assert.ok("~standard" in jsonSchema);
    const tool = functionTool({ name: "t", description: "", parameters: jsonSchema, execute: noop });
    assert.equal(tool.argumentsSchema, undefined);
    assert.equal(tool.parameters, jsonSchema);
    assert.deepEqual(await parseFunctionToolArguments(tool, '{"order_id": 5}'), { ok: false, message: "at $.order_id: 5 is not of type 'string'" });
  });
});
