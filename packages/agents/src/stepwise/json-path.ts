/**
 * The location of a bad value inside a tool's arguments (or inside a tool's
 * schema), written as the JSONPath the model and the developer read:
 * `$.items[0].sku`, with a key that is not an identifier as `['a key']`.
 */
import { pythonRepr } from "../contract/python-json.ts";

/**
 * Writes path segments as JSONPath: a number is an array index, a string a
 * property name. An empty path is `$`.
 *
 * @example
 * formatJsonPath(["items", 0, "unit price"]); // "$.items[0]['unit price']"
 */
export function formatJsonPath(segments: readonly (string | number)[]): string {
  let path = "$";
  for (const segment of segments) {
    if (typeof segment === "number") path += `[${segment}]`;
    else path += /^[A-Za-z_][A-Za-z0-9_]*$/.test(segment) ? `.${segment}` : `[${pythonRepr(segment)}]`;
  }
  return path;
}
