/**
 * Tool arguments described by a Standard Schema (zod 4, valibot, arktype and
 * any other library that implements `@standard-schema/spec`): the JSON Schema
 * the model is offered comes from the schema's Standard JSON Schema
 * converter, and the schema's own `validate` checks the arguments. Perdure
 * imports no schema library.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import { InvalidInputError } from "@perdure/engine";
import { formatJsonPath } from "./json-path.ts";
import type { ParsedToolArguments } from "./json-schema-validation.ts";
import type { JsonSchema } from "./model-client.ts";

/** The JSON Schema dialect asked of a schema library's converter, the one the argument check reads by default. */
const jsonSchemaTarget = "draft-2020-12";

/**
 * Whether `value` is a Standard Schema (has a `~standard` property with
 * `validate`) rather than a JSON Schema object. A plain object whose
 * `~standard` is hidden (not enumerable) is JSON Schema data: zod's
 * `z.toJSONSchema` output carries one, and the AI SDK hands such objects on.
 */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  const standard = (value as { "~standard"?: unknown })["~standard"];
  const hasValidate = typeof standard === "object" && standard !== null && typeof (standard as { validate?: unknown }).validate === "function";
  if (!hasValidate) return false;
  const isPlainObject = Object.getPrototypeOf(value) === Object.prototype;
  return !isPlainObject || Object.prototype.propertyIsEnumerable.call(value, "~standard");
}

/**
 * The JSON Schema of the schema's input, from its Standard JSON Schema
 * converter (`~standard.jsonSchema.input`, draft 2020-12). A schema whose
 * library has no converter on the schema itself throws an error that says how
 * to add one.
 */
export function standardSchemaToJsonSchema(toolName: string, schema: StandardSchemaV1): JsonSchema {
  const standard = schema["~standard"] as StandardSchemaV1.Props & Partial<StandardJSONSchemaV1.Props>;
  const converter = standard.jsonSchema;
  if (typeof converter?.input !== "function") {
    const advice = standard.vendor === "valibot"
      ? `wrap it with toStandardJsonSchema from "@valibot/to-json-schema"`
      : "use a schema that implements Standard JSON Schema (`~standard.jsonSchema`), or pass a JSON Schema object";
    throw new InvalidInputError(`tool ${toolName} parameters: the ${standard.vendor} schema cannot convert itself to JSON Schema for the model; ${advice}`);
  }
  try {
    return converter.input({ target: jsonSchemaTarget });
  } catch (error) {
    throw new InvalidInputError(`tool ${toolName} parameters: ${standard.vendor} could not convert the schema to JSON Schema: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Checks parsed arguments with the schema's own `validate`. A failure is
 * reported as a JSON Schema mismatch is: the first issue, after its location
 * when it has one (`at $.day: Invalid input: expected string, received
 * number`). A success carries the schema's output (defaults, transforms).
 */
export async function checkStandardSchemaArguments(schema: StandardSchemaV1, argumentsValue: Record<string, unknown>): Promise<ParsedToolArguments> {
  const result = await schema["~standard"].validate(argumentsValue);
  // The spec counts any falsy `issues` as success.
  if (!result.issues) return { ok: true, value: result.value as Record<string, unknown> };
  const [issue] = result.issues;
  if (issue === undefined) return { ok: false, message: "the arguments do not match the schema" };
  const path = (issue.path ?? []).map((segment) => {
    const key = typeof segment === "object" ? segment.key : segment;
    return typeof key === "number" ? key : String(key);
  });
  return { ok: false, message: path.length === 0 ? issue.message : `at ${formatJsonPath(path)}: ${issue.message}` };
}
