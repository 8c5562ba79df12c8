/**
 * The check of a model's tool arguments against the tool's JSON Schema, with
 * the one message the model sees when they do not match.
 *
 * Ajv does the validation; this module picks one of its errors and words it
 * as Python's `jsonschema` library does, with values in Python `repr`
 * (`'order_id' is a required property`, `5 is not of type 'string'`). These
 * messages are wire-visible and pinned by `json-schema-validation.test.ts`.
 *
 * Decisions, where the contract names the rules but not the text:
 * - `enum` and `const` compare with Python's `==` (`true` matches `1`, `1.0`
 *   matches `1`, `'1'` does not), by replacing Ajv's keywords.
 * - One error is reported. The shallowest one wins, as with `jsonschema`'s
 *   `best_match`: a missing top-level property before a bad nested value. At
 *   the same depth a `type` error comes first, `anyOf`/`oneOf` failures last,
 *   and otherwise the first in Ajv's evaluation order: an object's `required`
 *   before its `additionalProperties`, sibling properties in `properties`
 *   order, items in index order. (`best_match` takes the last sibling path.)
 * - A nested error starts with its location as a JSONPath from the arguments:
 *   `at $.items[0].sku: 5 is not of type 'string'`. A key that is not an
 *   identifier is written as `['a key']`.
 * - An `anyOf`/`oneOf` failure is reported as a whole (`... is not valid under
 *   any of the given schemas`). `best_match` may descend into one branch,
 *   which for a discriminated union can blame the wrong variant.
 * - The dialect follows `$schema`: draft-06/07, 2019-09, or 2020-12, which is
 *   also the default for no or an unknown `$schema`, as in `jsonschema`.
 *   `format` is not checked, as `jsonschema` does not check it by default.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { JsonSchema } from "./model-client.ts";
import { pythonEquals, pythonJsonLoads, pythonRepr } from "../contract/python-json.ts";
import { formatJsonPath } from "./json-path.ts";

/**
 * Checks one arguments value: `null` when it matches the schema, otherwise
 * the message of its first error.
 */
export type ArgumentValidator = (argumentsValue: unknown) => string | null;

/** What {@link parseToolArguments} returns. */
export type ParsedToolArguments = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * Compiles a tool's argument schema into an {@link ArgumentValidator}, once
 * per schema object (treat a schema as immutable after its first use).
 *
 * Throws a `TypeError` starting `invalid JSON Schema for tool arguments:` when
 * the schema itself is not a valid JSON Schema, an unsupported dialect, or has
 * a `$ref` or `pattern` that cannot be compiled; the caller adds the tool's
 * name.
 *
 * @example
 * const validate = compileArgumentValidator({ type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] });
 * validate({ order_id: "A-1" }); // null
 * validate({}); // "'order_id' is a required property"
 */
export function compileArgumentValidator(schema: JsonSchema): ArgumentValidator {
  let validator = compiledValidators.get(schema);
  if (validator === undefined) {
    validator = compileUncached(schema);
    compiledValidators.set(schema, validator);
  }
  return validator;
}

/**
 * Parses a model's tool-call arguments text and checks it against the tool's
 * schema. Empty text and the JSON `null` count as no arguments, `{}`: some
 * providers send them for a call without arguments. Anything else must be a
 * JSON object.
 *
 * | Problem | Message |
 * | --- | --- |
 * | Not JSON | `Invalid JSON arguments: Expecting value: line 1 column 1 (char 0)` (Python's `json` wording) |
 * | Not an object | `[1, 2] is not of type 'object'` |
 * | Schema mismatch | as from {@link compileArgumentValidator} |
 *
 * Throws the `TypeError` of {@link compileArgumentValidator} for an invalid
 * schema, whatever the arguments.
 *
 * @example
 * parseToolArguments('{"order_id": 5}', schema); // { ok: false, message: "at $.order_id: 5 is not of type 'string'" }
 */
export function parseToolArguments(argumentsText: string, schema: JsonSchema): ParsedToolArguments {
  const validate = compileArgumentValidator(schema);
  const parsed = parseArgumentsObject(argumentsText);
  if (!parsed.ok) return parsed;
  const problem = validate(parsed.value);
  return problem === null ? parsed : { ok: false, message: problem };
}

/**
 * Parses a model's tool-call arguments text into a JSON object, with the
 * first two rows of {@link parseToolArguments}' messages; the schema check is
 * the caller's (a JSON Schema's or a Standard Schema's).
 *
 * @example
 * parseArgumentsObject("[1, 2]"); // { ok: false, message: "[1, 2] is not of type 'object'" }
 */
export function parseArgumentsObject(argumentsText: string): ParsedToolArguments {
  let value: unknown = null;
  if (!/^[ \t\n\r]*$/.test(argumentsText)) {
    const parsed = pythonJsonLoads(argumentsText);
    if (!parsed.ok) return { ok: false, message: `Invalid JSON arguments: ${parsed.message}` };
    value = parsed.value;
  }
  value ??= {};
  if (!isJsonObject(value)) return { ok: false, message: `${pythonRepr(value)} is not of type 'object'` };
  return { ok: true, value };
}

const compiledValidators = new WeakMap<JsonSchema, ArgumentValidator>();

function compileUncached(schema: JsonSchema): ArgumentValidator {
  if (!isJsonObject(schema)) throw invalidSchemaError(`the schema must be a JSON object, got ${pythonRepr(schema)}`);
  // The dialect picks the Ajv instance, so `$schema` itself is not compiled.
  const { $schema: dialectUri, ...dialectFreeSchema } = schema;
  const ajv = ajvForDialect(dialectUri);
  if (!ajv.validateSchema(dialectFreeSchema)) {
    throw invalidSchemaError(firstErrorMessage(ajv.errors ?? [], dialectFreeSchema, undefined));
  }
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(dialectFreeSchema);
  } catch (compileError) {
    throw invalidSchemaError((compileError as Error).message, compileError);
  } finally {
    // Frees the schema's `$id` for the next listing of the same tool.
    ajv.removeSchema(dialectFreeSchema);
  }
  return (argumentsValue) => {
    if (validate(argumentsValue)) return null;
    return firstErrorMessage(validate.errors ?? [], argumentsValue, dialectFreeSchema);
  };
}

function invalidSchemaError(reason: string, cause?: unknown): TypeError {
  return new TypeError(`invalid JSON Schema for tool arguments: ${reason}`, cause === undefined ? undefined : { cause });
}

type Dialect = "draft-07" | "2019-09" | "2020-12";

const dialectsBySchemaUri = new Map<string, Dialect | "unsupported">([
  ["json-schema.org/draft-03/schema", "unsupported"],
  ["json-schema.org/draft-04/schema", "unsupported"],
  ["json-schema.org/draft-06/schema", "draft-07"],
  ["json-schema.org/draft-07/schema", "draft-07"],
  ["json-schema.org/draft/2019-09/schema", "2019-09"],
  ["json-schema.org/draft/2020-12/schema", "2020-12"],
]);

/**
 * Ajv's code-generation scope keeps every validator an instance compiled, and
 * a tool source brings new schema objects with every listing. A fresh
 * instance after this many compiles bounds that memory; a new instance costs
 * tens of milliseconds, so this keeps it rare.
 */
const compilesPerAjvInstance = 100;

const ajvByDialect = new Map<Dialect, { ajv: Ajv; compiles: number }>();

function ajvForDialect(dialectUri: unknown): Ajv {
  if (dialectUri !== undefined && typeof dialectUri !== "string") {
    throw invalidSchemaError(`$schema must be a string, got ${pythonRepr(dialectUri)}`);
  }
  const normalizedUri = (dialectUri ?? "").replace(/^https?:\/\//, "").replace(/#$/, "");
  const dialect = dialectsBySchemaUri.get(normalizedUri) ?? "2020-12";
  if (dialect === "unsupported") {
    throw invalidSchemaError(`$schema ${pythonRepr(dialectUri)} is not supported; use draft-07 or 2020-12`);
  }
  let instance = ajvByDialect.get(dialect);
  if (instance === undefined || instance.compiles >= compilesPerAjvInstance) {
    instance = { ajv: createAjv(dialect), compiles: 0 };
    ajvByDialect.set(dialect, instance);
  }
  instance.compiles += 1;
  return instance.ajv;
}

function createAjv(dialect: Dialect): Ajv {
  const options: Options = {
    allErrors: true,
    verbose: true,
    strict: false,
    logger: false,
    validateFormats: false,
    ownProperties: true,
  };
  // The three classes differ only in their vocabularies and meta-schemas.
  const ajv: Ajv = dialect === "draft-07" ? new Ajv(options) : dialect === "2019-09" ? new Ajv2019(options) : new Ajv2020(options);
  ajv.removeKeyword("enum");
  ajv.removeKeyword("const");
  ajv.addKeyword({
    keyword: "enum",
    schemaType: "array",
    errors: false,
    validate: (allowed: unknown[], data: unknown) => allowed.some((candidate) => pythonEquals(candidate, data)),
  });
  ajv.addKeyword({
    keyword: "const",
    errors: false,
    validate: (expected: unknown, data: unknown) => pythonEquals(expected, data),
  });
  return ajv;
}

function firstErrorMessage(errors: ErrorObject[], rootData: unknown, rootSchema: unknown): string {
  const { reportable, matchingItemCounts } = reportableErrors(errors, rootSchema);
  const first = reportable.reduce<ErrorObject | undefined>(
    (best, candidate) => best === undefined || compareRelevance(candidate, best) < 0 ? candidate : best,
    undefined,
  );
  if (first === undefined) return "the arguments do not match the schema";
  const message = describeError(first, reportable, matchingItemCounts.get(first) ?? 0);
  const path = formatInstancePath(first.instancePath, rootData);
  return path === "$" ? message : `at ${path}: ${message}`;
}

const weakKeywords = new Set(["anyOf", "oneOf"]);

/** Negative when `left` is reported before `right`. Stable: `reduce` keeps the earlier of equals. */
function compareRelevance(left: ErrorObject, right: ErrorObject): number {
  const depthDifference = pathDepth(left.instancePath) - pathDepth(right.instancePath);
  return depthDifference !== 0 ? depthDifference : keywordRank(left.keyword) - keywordRank(right.keyword);
}

function pathDepth(instancePath: string): number {
  return instancePath === "" ? 0 : instancePath.split("/").length - 1;
}

function keywordRank(keyword: string): number {
  if (keyword === "type") return 0;
  return weakKeywords.has(keyword) ? 2 : 1;
}

/**
 * Drops what is not an error of the arguments themselves: the errors of the
 * branches of a failed `anyOf`, `oneOf`, or `contains` (Ajv lists them just
 * before the failure), and Ajv's summary errors for `if` and `propertyNames`,
 * whose underlying errors are listed too. For a failed `contains`, counts the
 * items that matched: those without a branch error.
 */
function reportableErrors(errors: ErrorObject[], rootSchema: unknown): { reportable: ErrorObject[]; matchingItemCounts: Map<ErrorObject, number> } {
  const dropped = new Set<number>();
  const matchingItemCounts = new Map<ErrorObject, number>();
  errors.forEach((error, index) => {
    if (error.keyword === "if" || error.keyword === "propertyNames") dropped.add(index);
    if (error.keyword !== "anyOf" && error.keyword !== "oneOf" && error.keyword !== "contains") return;
    const branchSchemas = schemaObjectsReachableFrom(error.schema, rootSchema);
    const failingItems = new Set<string>();
    for (let earlier = index - 1; earlier >= 0; earlier -= 1) {
      const candidate = errors[earlier];
      if (candidate === undefined || !isBranchError(candidate, error, branchSchemas)) break;
      dropped.add(earlier);
      failingItems.add(candidate.instancePath.slice(error.instancePath.length + 1).split("/")[0] ?? "");
    }
    if (error.keyword === "contains" && Array.isArray(error.data)) matchingItemCounts.set(error, error.data.length - failingItems.size);
  });
  return { reportable: errors.filter((_error, index) => !dropped.has(index)), matchingItemCounts };
}

function isBranchError(candidate: ErrorObject, composite: ErrorObject, branchSchemas: Set<unknown> | "any"): boolean {
  const isWithin = candidate.instancePath === composite.instancePath || candidate.instancePath.startsWith(`${composite.instancePath}/`);
  if (!isWithin) return false;
  const isSiblingKeyword = candidate.parentSchema === composite.parentSchema && candidate.instancePath === composite.instancePath;
  if (isSiblingKeyword) return false;
  return branchSchemas === "any" || typeof candidate.parentSchema !== "object" || branchSchemas.has(candidate.parentSchema);
}

/**
 * Every object inside `start`, following local `$ref`s (`#` and `#/...`)
 * from the root. Anything it cannot follow (anchors, other documents, nested
 * `$id`) makes every schema count as reachable, which errs towards dropping
 * an error rather than reporting a branch's error as the arguments' error.
 */
function schemaObjectsReachableFrom(start: unknown, rootSchema: unknown): Set<unknown> | "any" {
  if (rootSchema === undefined) return "any";
  const reachable = new Set<unknown>();
  const pending: unknown[] = [start];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== "object" || node === null || reachable.has(node)) continue;
    reachable.add(node);
    for (const [key, value] of Object.entries(node)) {
      if (key === "$id" && node !== rootSchema) return "any";
      if ((key === "$ref" || key === "$dynamicRef" || key === "$recursiveRef") && typeof value === "string") {
        const target = resolveLocalReference(value, rootSchema);
        if (target === undefined) return "any";
        pending.push(target);
      } else {
        pending.push(value);
      }
    }
  }
  return reachable;
}

function resolveLocalReference(reference: string, rootSchema: unknown): unknown {
  if (reference === "#") return rootSchema;
  if (!reference.startsWith("#/")) return undefined;
  let node = rootSchema;
  for (const segment of reference.slice(2).split("/")) {
    const key = decodeURIComponent(segment).replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * Words one Ajv error as Python's `jsonschema` does. `all` is for errors Ajv
 * splits in several; `matchingItems` is for `contains`.
 */
function describeError(error: ErrorObject, all: ErrorObject[], matchingItems: number): string {
  const instance = pythonRepr(error.data);
  const keywordValue: unknown = error.schema;
  const parentSchema = (error.parentSchema ?? {}) as Record<string, unknown>;
  const params = error.params as Record<string, unknown>;
  const limit = typeof keywordValue === "number" ? keywordValue : Number(params["limit"]);
  switch (error.keyword) {
    case "type": {
      const types = Array.isArray(keywordValue) ? keywordValue : [keywordValue];
      return `${instance} is not of type ${types.map((type) => pythonRepr(type)).join(", ")}`;
    }
    case "required": return `${pythonRepr(params["missingProperty"])} is a required property`;
    case "enum": return `${instance} is not one of ${pythonRepr(keywordValue)}`;
    case "const": return `${pythonRepr(keywordValue)} was expected`;
    case "additionalProperties": {
      const extras = sortedCodePointwise(sameKeywordErrors(error, all).map((each) => String((each.params as Record<string, unknown>)["additionalProperty"])));
      const patterns = parentSchema["patternProperties"];
      if (isJsonObject(patterns)) {
        const regexes = sortedCodePointwise(Object.keys(patterns)).map((pattern) => pythonRepr(pattern)).join(", ");
        return `${extras.map((extra) => pythonRepr(extra)).join(", ")} ${extras.length === 1 ? "does" : "do"} not match any of the regexes: ${regexes}`;
      }
      return `Additional properties are not allowed (${unexpected(extras)})`;
    }
    case "unevaluatedProperties": {
      const extras = sameKeywordErrors(error, all).map((each) => String((each.params as Record<string, unknown>)["unevaluatedProperty"]));
      return `Unevaluated properties are not allowed (${unexpected(sortedCodePointwise(extras))})`;
    }
    case "minimum": return `${instance} is less than the minimum of ${pythonRepr(keywordValue)}`;
    case "maximum": return `${instance} is greater than the maximum of ${pythonRepr(keywordValue)}`;
    case "exclusiveMinimum": return `${instance} is less than or equal to the minimum of ${pythonRepr(keywordValue)}`;
    case "exclusiveMaximum": return `${instance} is greater than or equal to the maximum of ${pythonRepr(keywordValue)}`;
    case "multipleOf": return `${instance} is not a multiple of ${pythonRepr(keywordValue)}`;
    case "minLength":
    case "minItems": return `${instance} ${limit === 1 ? "should be non-empty" : "is too short"}`;
    case "maxLength":
    case "maxItems": return `${instance} ${limit === 0 ? "is expected to be empty" : "is too long"}`;
    case "minProperties": return `${instance} ${limit === 1 ? "should be non-empty" : "does not have enough properties"}`;
    case "maxProperties": return `${instance} ${limit === 0 ? "is expected to be empty" : "has too many properties"}`;
    case "pattern": return `${instance} does not match ${pythonRepr(keywordValue)}`;
    case "uniqueItems": return `${instance} has non-unique elements`;
    case "items": {
      const rest = Array.isArray(error.data) ? error.data.slice(limit) : [];
      return `Expected at most ${limit} ${limit === 1 ? "item" : "items"} but found ${rest.length} extra: ${pythonRepr(rest.length === 1 ? rest[0] : rest)}`;
    }
    case "additionalItems":
    case "unevaluatedItems": {
      const start = params["limit"] ?? params["len"];
      const rest = Array.isArray(error.data) ? error.data.slice(Number(start)) : [];
      const label = error.keyword === "additionalItems" ? "Additional" : "Unevaluated";
      return `${label} items are not allowed (${unexpected(rest)})`;
    }
    case "contains": return describeContains(instance, parentSchema, matchingItems);
    case "dependentRequired":
    case "dependencies": return `${pythonRepr(params["missingProperty"])} is a dependency of ${pythonRepr(params["property"])}`;
    case "not": return `${instance} should not be valid under ${pythonRepr(keywordValue)}`;
    case "anyOf": return `${instance} is not valid under any of the given schemas`;
    case "oneOf": return describeOneOf(instance, keywordValue, params["passingSchemas"]);
    case "false schema": return `False schema does not allow ${instance}`;
    default: return `${instance} is not valid under the ${pythonRepr(error.keyword)} keyword (${error.message ?? "no reason given"})`;
  }
}

function sameKeywordErrors(error: ErrorObject, all: ErrorObject[]): ErrorObject[] {
  return all.filter((each) => each.keyword === error.keyword && each.instancePath === error.instancePath && each.parentSchema === error.parentSchema);
}

/** `jsonschema`'s `extras_msg`: `'a', 'b' were unexpected`. */
function unexpected(extras: unknown[]): string {
  return `${extras.map((extra) => pythonRepr(extra)).join(", ")} ${extras.length === 1 ? "was" : "were"} unexpected`;
}

/** Python's `sorted()` of strings: by code point, where JavaScript's default sort uses UTF-16 units. */
function sortedCodePointwise(texts: string[]): string[] {
  return [...texts].sort((left, right) => {
    const leftPoints = Array.from(left, (character) => character.codePointAt(0) ?? 0);
    const rightPoints = Array.from(right, (character) => character.codePointAt(0) ?? 0);
    for (let index = 0; index < Math.min(leftPoints.length, rightPoints.length); index += 1) {
      const difference = (leftPoints[index] ?? 0) - (rightPoints[index] ?? 0);
      if (difference !== 0) return difference;
    }
    return leftPoints.length - rightPoints.length;
  });
}

function describeContains(instance: string, parentSchema: Record<string, unknown>, matchingItems: number): string {
  const maxContains = parentSchema["maxContains"];
  if (typeof maxContains === "number" && matchingItems > maxContains) {
    return `Too many items match the given schema (expected at most ${pythonRepr(maxContains)})`;
  }
  if (matchingItems === 0) return `${instance} does not contain items matching the given schema`;
  const minContains = parentSchema["minContains"] ?? 1;
  return `Too few items match the given schema (expected at least ${pythonRepr(minContains)} but only ${matchingItems} matched)`;
}

/** Ajv stops at the second passing branch; `jsonschema` lists the later ones, then the first. */
function describeOneOf(instance: string, branches: unknown, passingSchemas: unknown): string {
  if (!Array.isArray(passingSchemas) || !Array.isArray(branches)) return `${instance} is not valid under any of the given schemas`;
  const [firstValid, ...moreValid] = passingSchemas.map((index) => branches[Number(index)] as unknown);
  return `${instance} is valid under each of ${[...moreValid, firstValid].map((schema) => pythonRepr(schema)).join(", ")}`;
}

/** Ajv's JSON Pointer as a JSONPath: `/items/0/a b` becomes `$.items[0]['a b']`. */
function formatInstancePath(instancePath: string, rootData: unknown): string {
  if (instancePath === "") return "$";
  const segments: (string | number)[] = [];
  let node = rootData;
  for (const escapedSegment of instancePath.slice(1).split("/")) {
    const segment = escapedSegment.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(node)) {
      segments.push(Number(segment));
      node = node[Number(segment)] as unknown;
    } else {
      segments.push(segment);
      node = isJsonObject(node) && Object.hasOwn(node, segment) ? node[segment] : undefined;
    }
  }
  return formatJsonPath(segments);
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
