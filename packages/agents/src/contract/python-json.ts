/**
 * JSON as the upstream Python core writes, compares, prints, and parses it.
 *
 * Tool results and argument messages reach the model as text, and the
 * contract asks for the same text as the Python core. This module is the one
 * place that knows how Python renders JSON values:
 *
 * - {@link pythonJsonDumps}: `json.dumps(value)` with its default separators.
 * - {@link pythonRepr}: `repr(value)` of the value `json.loads` returns, as
 *   `jsonschema` quotes values in its messages.
 * - {@link pythonEquals}: Python's `==`, which JSON Schema `enum` and `const`
 *   use, so `true` equals `1`.
 * - {@link pythonJsonLoads}: `json.loads(text)`, with `JSONDecodeError`'s
 *   message when the text is not JSON.
 *
 * JavaScript cannot tell `1.0` from `1`, so a whole number always prints as a
 * Python `int` (`1`, never `1.0`). Object keys that look like array indexes
 * come first in a JavaScript object, so `{"b": 1, "1": 2}` prints as
 * `{"1": 2, "b": 1}`; Python keeps the order of the text.
 */

/**
 * The JSON text Python's `json.dumps(value)` writes with its default
 * settings: `", "` between items, `": "` after keys, keys in insertion order
 * (not sorted), and `NaN`, `Infinity`, `-Infinity` for non-finite numbers.
 *
 * Decision: non-ASCII characters stay as they are (UTF-8), as with
 * `ensure_ascii=False`, rather than `\uXXXX` escapes. The model reads the text
 * and escapes only cost tokens. A lone surrogate is escaped (`\ud800`), as
 * `JSON.stringify` does, so the text is always well-formed.
 *
 * Otherwise the value is read as `JSON.stringify` reads it: `toJSON` is
 * honoured, boxed primitives are unwrapped, members that are `undefined`,
 * functions, or symbols are dropped, and such array elements are written as
 * `null`. Where nothing can be dropped (the value itself), they are `null`,
 * like a Python function that returns `None`. A `bigint` is written as its
 * digits, as Python writes an `int` of any size. A cycle throws a `TypeError`.
 *
 * @example
 * pythonJsonDumps({ status: "ok", ids: [1, 2.5], note: "café" });
 * // '{"status": "ok", "ids": [1, 2.5], "note": "café"}'
 */
export function pythonJsonDumps(value: unknown): string {
  return dumpValue(value, "", new Set()) ?? "null";
}

function dumpValue(input: unknown, key: string, ancestors: Set<object>): string | undefined {
  const value = unboxed(withToJson(input, key));
  if (value === null) return "null";
  switch (typeof value) {
    case "string": return JSON.stringify(value);
    case "number": return formatPythonNumber(value, "json");
    case "bigint": return value.toString();
    case "boolean": return value ? "true" : "false";
    case "object": break;
    default: return undefined;
  }
  if (ancestors.has(value)) throw new TypeError("pythonJsonDumps: the value contains a circular reference");
  ancestors.add(value);
  let text: string;
  if (Array.isArray(value)) {
    text = `[${value.map((element, index) => dumpValue(element, String(index), ancestors) ?? "null").join(", ")}]`;
  } else {
    const members: string[] = [];
    for (const [memberKey, member] of Object.entries(value)) {
      const memberText = dumpValue(member, memberKey, ancestors);
      if (memberText !== undefined) members.push(`${JSON.stringify(memberKey)}: ${memberText}`);
    }
    text = `{${members.join(", ")}}`;
  }
  ancestors.delete(value);
  return text;
}

function withToJson(value: unknown, key: string): unknown {
  if ((typeof value === "object" && value !== null) || typeof value === "bigint") {
    const toJson = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJson === "function") return (toJson as (key: string) => unknown).call(value, key);
  }
  return value;
}

function unboxed(value: unknown): unknown {
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return value.valueOf();
  return value;
}

/**
 * Python's `repr()` of a JSON value as `json.loads` returns it: strings in
 * single quotes (double quotes when the string holds a `'` and no `"`),
 * `True`, `False`, `None`, `[1, 'a']`, `{'key': 1.5}`. Non-printable
 * characters are escaped as Python escapes them (`\n`, `\x00`, `\u200b`).
 *
 * @example
 * pythonRepr({ ok: true, tags: ["a"], limit: null }); // "{'ok': True, 'tags': ['a'], 'limit': None}"
 */
export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  switch (typeof value) {
    case "string": return reprString(value);
    case "number": return formatPythonNumber(value, "repr");
    case "bigint": return value.toString();
    case "boolean": return value ? "True" : "False";
    case "object": break;
    default: return `<${typeof value}>`;
  }
  if (Array.isArray(value)) return `[${value.map((element) => pythonRepr(element)).join(", ")}]`;
  const members = Object.entries(value)
    .filter(([, member]) => member !== undefined)
    .map(([key, member]) => `${reprString(key)}: ${pythonRepr(member)}`);
  return `{${members.join(", ")}}`;
}

const nonPrintableCharacter = /^[\p{C}\p{Z}]$/u;

function reprString(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let body = "";
  for (const character of text) {
    if (character === quote || character === "\\") body += `\\${character}`;
    else if (character === "\n") body += "\\n";
    else if (character === "\r") body += "\\r";
    else if (character === "\t") body += "\\t";
    else if (character !== " " && nonPrintableCharacter.test(character)) body += escapeCodePoint(character.codePointAt(0) ?? 0);
    else body += character;
  }
  return `${quote}${body}${quote}`;
}

function escapeCodePoint(codePoint: number): string {
  const hex = codePoint.toString(16);
  if (codePoint <= 0xff) return `\\x${hex.padStart(2, "0")}`;
  if (codePoint <= 0xffff) return `\\u${hex.padStart(4, "0")}`;
  return `\\U${hex.padStart(8, "0")}`;
}

/**
 * A number as Python prints it: a whole number as an `int` (all its digits,
 * never an exponent), any other number as `float.__repr__` does (the
 * shortest round-trip digits, with an exponent below `1e-4` or from `1e16`:
 * `1e-05`, `0.0001`, `2.5e+16`). Non-finite numbers differ by context:
 * `json.dumps` writes `NaN` and `Infinity`, `repr` writes `nan` and `inf`.
 */
function formatPythonNumber(value: number, context: "json" | "repr"): string {
  if (Number.isNaN(value)) return context === "json" ? "NaN" : "nan";
  if (!Number.isFinite(value)) {
    const infinity = context === "json" ? "Infinity" : "inf";
    return value > 0 ? infinity : `-${infinity}`;
  }
  if (Number.isInteger(value)) return BigInt(value).toString();
  const [mantissa = "", exponentText = "0"] = value.toExponential().split("e");
  const sign = mantissa.startsWith("-") ? "-" : "";
  const digits = mantissa.replace("-", "").replace(".", "");
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : "";
    const exponentDigits = String(Math.abs(exponent)).padStart(2, "0");
    return `${sign}${digits.slice(0, 1)}${fraction}e${exponent < 0 ? "-" : "+"}${exponentDigits}`;
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  return `${sign}${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
}

/**
 * Python's `==` on JSON values: `True == 1 == 1.0` and `False == 0`; numbers
 * by value; strings only equal strings (no coercion, `'1' != 1`); `None` only
 * equals `None`; lists element by element; dicts with the same keys in any
 * order and equal values. Members whose value is `undefined` do not count,
 * as in JSON. NaN equals nothing, itself included.
 *
 * @example
 * pythonEquals(true, 1); // true
 * pythonEquals({ a: [1, false] }, { a: [1.0, 0] }); // true
 * pythonEquals("1", 1); // false
 */
export function pythonEquals(left: unknown, right: unknown): boolean {
  const leftNumber = asPythonNumber(left);
  const rightNumber = asPythonNumber(right);
  if (leftNumber !== undefined || rightNumber !== undefined) {
    return leftNumber !== undefined && rightNumber !== undefined && numbersEqual(leftNumber, rightNumber);
  }
  if (Array.isArray(left) || Array.isArray(right)) {
    return Array.isArray(left) && Array.isArray(right) && left.length === right.length
      && left.every((element, index) => pythonEquals(element, right[index]));
  }
  if (isDict(left) && isDict(right)) {
    const leftKeys = definedKeys(left);
    const rightKeys = definedKeys(right);
    return leftKeys.length === rightKeys.length
      && leftKeys.every((key) => Object.hasOwn(right, key) && pythonEquals(left[key], right[key]));
  }
  return left === right;
}

function asPythonNumber(value: unknown): number | bigint | undefined {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number" || typeof value === "bigint") return value;
  return undefined;
}

function numbersEqual(left: number | bigint, right: number | bigint): boolean {
  if (typeof left === typeof right) return left === right;
  const [whole, other] = typeof left === "bigint" ? [left, right as number] : [right as bigint, left];
  return Number.isInteger(other) && BigInt(other) === whole;
}

function isDict(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function definedKeys(value: Record<string, unknown>): string[] {
  return Object.keys(value).filter((key) => value[key] !== undefined);
}

/** What {@link pythonJsonLoads} returns: the value, or why the text is not JSON. */
export type PythonJsonLoadsResult = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * Parses JSON text like Python's `json.loads`, and on failure gives the
 * message of Python's `JSONDecodeError`, such as
 * `Expecting ',' delimiter: line 1 column 12 (char 11)` (lines and columns
 * from 1, `char` counting code points from 0). The message never depends on
 * the JavaScript engine's wording.
 *
 * One difference: Python also reads `NaN`, `Infinity`, and `-Infinity`, which
 * are not JSON; here they fail with `Expecting value`.
 *
 * @example
 * pythonJsonLoads('{"a": }'); // { ok: false, message: "Expecting value: line 1 column 7 (char 6)" }
 */
export function pythonJsonLoads(text: string): PythonJsonLoadsResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (parseError) {
    const decodeError = findJsonDecodeError(text);
    // Only reachable if this scanner and JSON.parse ever disagree: keep the engine's reason.
    if (decodeError === undefined) return { ok: false, message: (parseError as Error).message };
    return { ok: false, message: formatDecodeError(text, decodeError) };
  }
}

interface JsonDecodeError { reason: string; index: number }

function formatDecodeError(text: string, { reason, index }: JsonDecodeError): string {
  const before = text.slice(0, index);
  const lineStart = before.lastIndexOf("\n") + 1;
  const line = before.split("\n").length;
  const column = codePointCount(before.slice(lineStart)) + 1;
  return `${reason}: line ${line} column ${column} (char ${codePointCount(before)})`;
}

function codePointCount(text: string): number {
  return Array.from(text).length;
}

/**
 * Finds the first error the way CPython's `json` scanner does, with its
 * reasons and positions (UTF-16 indexes here, converted for the message).
 * Iterative, so deeply nested text cannot overflow the stack.
 */
function findJsonDecodeError(text: string): JsonDecodeError | undefined {
  if (text.startsWith("\ufeff")) return { reason: "Unexpected UTF-8 BOM (decode using utf-8-sig)", index: 0 };
  const open: ("array" | "object")[] = [];
  let index = skipWhitespace(text, 0);
  for (;;) {
    // Here a value must start at `index`.
    const character = text[index];
    if (character === "{" || character === "[") {
      const closing = character === "{" ? "}" : "]";
      index = skipWhitespace(text, index + 1);
      if (text[index] === closing) {
        index += 1;
      } else if (character === "[") {
        open.push("array");
        continue;
      } else {
        const afterKey = scanKeyAndColon(text, index);
        if (typeof afterKey !== "number") return afterKey;
        open.push("object");
        index = afterKey;
        continue;
      }
    } else {
      const afterScalar = character === '"' ? scanString(text, index) : scanLiteralOrNumber(text, index);
      if (typeof afterScalar !== "number") return afterScalar;
      index = afterScalar;
    }
    // A value ended at `index`: close containers until the next value starts.
    let nextValueStart: number | undefined;
    while (nextValueStart === undefined) {
      index = skipWhitespace(text, index);
      const container = open.at(-1);
      if (container === undefined) return index === text.length ? undefined : { reason: "Extra data", index };
      const closing = container === "object" ? "}" : "]";
      if (text[index] === closing) {
        open.pop();
        index += 1;
        continue;
      }
      if (text[index] !== ",") return { reason: "Expecting ',' delimiter", index };
      const commaIndex = index;
      index = skipWhitespace(text, index + 1);
      if (text[index] === closing) return { reason: `Illegal trailing comma before end of ${container}`, index: commaIndex };
      if (container === "array") {
        nextValueStart = index;
      } else {
        const afterKey = scanKeyAndColon(text, index);
        if (typeof afterKey !== "number") return afterKey;
        nextValueStart = afterKey;
      }
    }
    index = nextValueStart;
  }
}

function skipWhitespace(text: string, index: number): number {
  let position = index;
  while (position < text.length && " \t\n\r".includes(text[position] ?? "")) position += 1;
  return position;
}

function scanKeyAndColon(text: string, index: number): number | JsonDecodeError {
  if (text[index] !== '"') return { reason: "Expecting property name enclosed in double quotes", index };
  const afterKey = scanString(text, index);
  if (typeof afterKey !== "number") return afterKey;
  const colonIndex = skipWhitespace(text, afterKey);
  if (text[colonIndex] !== ":") return { reason: "Expecting ':' delimiter", index: colonIndex };
  return skipWhitespace(text, colonIndex + 1);
}

const hexDigits = /^[0-9a-fA-F]{4}$/;

function scanString(text: string, quoteIndex: number): number | JsonDecodeError {
  const unterminated = { reason: "Unterminated string starting at", index: quoteIndex };
  let index = quoteIndex + 1;
  for (;;) {
    if (index >= text.length) return unterminated;
    const code = text.charCodeAt(index);
    if (text[index] === '"') return index + 1;
    if (code <= 0x1f) return { reason: "Invalid control character at", index };
    if (text[index] !== "\\") {
      index += 1;
      continue;
    }
    const escapeIndex = index + 1;
    if (escapeIndex >= text.length) return unterminated;
    if (text[escapeIndex] !== "u") {
      if (!'"\\/bfnrt'.includes(text[escapeIndex] ?? "")) return { reason: "Invalid \\escape", index };
      index = escapeIndex + 1;
      continue;
    }
    const digitsEnd = escapeIndex + 5;
    if (digitsEnd >= text.length || !hexDigits.test(text.slice(escapeIndex + 1, digitsEnd))) {
      return { reason: "Invalid \\uXXXX escape", index: escapeIndex };
    }
    index = digitsEnd;
    const unit = Number.parseInt(text.slice(escapeIndex + 1, digitsEnd), 16);
    // CPython reads a following `\uXXXX` as the low half of a surrogate pair and checks its digits too.
    if (unit >= 0xd800 && unit <= 0xdbff && index + 6 < text.length && text.startsWith("\\u", index)) {
      if (!hexDigits.test(text.slice(index + 2, index + 6))) return { reason: "Invalid \\uXXXX escape", index: index + 1 };
      index += 6;
    }
  }
}

const jsonNumber = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/y;

function scanLiteralOrNumber(text: string, index: number): number | JsonDecodeError {
  for (const literal of ["null", "true", "false"]) {
    if (text.startsWith(literal, index)) return index + literal.length;
  }
  jsonNumber.lastIndex = index;
  return jsonNumber.test(text) ? jsonNumber.lastIndex : { reason: "Expecting value", index };
}
