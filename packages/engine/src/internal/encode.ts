import type { Codec } from "./codec.ts";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import { ValueTooLargeError } from "../errors/value-too-large-error.ts";

/** Encodes a value to JSON text, refusing values that are not JSON or exceed the store's limit. */
export function encodeValue<TValue>(what: string, codec: Codec<TValue>, value: TValue, maxValueBytes: number): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(codec.encode(value));
  } catch (error) {
    throw new InvalidInputError(`${what} cannot be encoded as JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (text === undefined) {
    throw new InvalidInputError(`${what} cannot be encoded as JSON: got ${typeof value}`);
  }
  // Byte length is at most 3 bytes per UTF-16 unit; measure exactly only near the limit.
  if (text.length * 3 > maxValueBytes) {
    const bytes = Buffer.byteLength(text);
    if (bytes > maxValueBytes) {
      throw new ValueTooLargeError(`${what} is ${bytes} bytes encoded, over the store's maxValueBytes of ${maxValueBytes}; store it in smaller pieces`);
    }
  }
  return text;
}

/** Decodes JSON text written by {@link encodeValue}. */
export function decodeValue<TValue>(codec: Codec<TValue>, text: string): TValue {
  return codec.decode(JSON.parse(text));
}
