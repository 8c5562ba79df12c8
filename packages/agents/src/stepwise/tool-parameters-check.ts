/**
 * The check a function tool's JSON Schema gets when the tool is built, so a
 * typo in a schema stops the Worker at start instead of failing the first
 * call: the root must be `{ "type": "object" }`, every `type` must name a
 * JSON Schema type, and the schema must be valid in its dialect and compile.
 */
import { InvalidInputError } from "@perdure/engine";
import { pythonRepr } from "../contract/python-json.ts";
import { formatJsonPath } from "./json-path.ts";
import { compileArgumentValidator } from "./json-schema-validation.ts";
import type { JsonSchema } from "./model-client.ts";

const jsonSchemaTypes = ["array", "boolean", "integer", "null", "number", "object", "string"];

/** Keywords whose value is one schema. */
const singleSchemaKeywords = [
  "additionalProperties", "additionalItems", "contains", "not", "if", "then", "else",
  "propertyNames", "unevaluatedItems", "unevaluatedProperties", "items",
];
/** Keywords whose value is a list of schemas (`items` in its draft-07 array form too). */
const schemaListKeywords = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/** Keywords whose value maps names to schemas (`dependencies` may map to a list of names instead). */
const schemaMapKeywords = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];

/**
 * Throws an `InvalidInputError` naming the tool and the path when `schema`
 * cannot describe a tool's arguments.
 *
 * @example
 * checkToolParametersSchema("get_day", { type: "object", properties: { day: { type: "strin" } } });
 * // InvalidInputError: tool get_day parameters: at $.properties.day.type: 'strin' is not a JSON Schema type; use one of 'array', ...
 */
export function checkToolParametersSchema(toolName: string, schema: JsonSchema): void {
  const fail = (path: (string | number)[], problem: string): never => {
    throw new InvalidInputError(`tool ${toolName} parameters: at ${formatJsonPath(path)}: ${problem}`);
  };
  if (schema["type"] !== "object") {
    fail(["type"], `the root must be { "type": "object" } (the arguments are a JSON object), found ${schema["type"] === undefined ? "no type" : pythonRepr(schema["type"])}`);
  }
  visitSchema(schema, [], fail);
  try {
    compileArgumentValidator(schema);
  } catch (error) {
    const reason = (error as Error).message.replace(/^invalid JSON Schema for tool arguments: /, "");
    throw new InvalidInputError(`tool ${toolName} parameters: invalid JSON Schema: ${reason}`, { cause: error });
  }
}

type Fail = (path: (string | number)[], problem: string) => never;

function visitSchema(schema: unknown, path: (string | number)[], fail: Fail): void {
  if (!isObject(schema)) return;
  const type = schema["type"];
  if (type !== undefined) {
    const types = Array.isArray(type) ? type : [type];
    types.forEach((each, index) => {
      if (typeof each !== "string" || !jsonSchemaTypes.includes(each)) {
        fail([...path, "type", ...(Array.isArray(type) ? [index] : [])], `${pythonRepr(each)} is not a JSON Schema type; use one of ${jsonSchemaTypes.map((name) => pythonRepr(name)).join(", ")}`);
      }
    });
  }
  for (const keyword of singleSchemaKeywords) {
    if (isObject(schema[keyword])) visitSchema(schema[keyword], [...path, keyword], fail);
  }
  for (const keyword of schemaListKeywords) {
    const list = schema[keyword];
    if (Array.isArray(list)) list.forEach((each, index) => visitSchema(each, [...path, keyword, index], fail));
  }
  for (const keyword of schemaMapKeywords) {
    const map = schema[keyword];
    if (isObject(map)) for (const [name, each] of Object.entries(map)) visitSchema(each, [...path, keyword, name], fail);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
