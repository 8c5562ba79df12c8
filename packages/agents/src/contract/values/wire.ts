/**
 * Small readers for wire JSON. Decoding is tolerant: an absent optional field
 * reads as its default, so values written by older code still decode.
 */
import { describeValue } from "@perdure/engine";

export type WireObject = Record<string, unknown>;

export function asWireObject(value: unknown, what: string): WireObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`${what} must be a JSON object, got ${describeValue(value)}`);
  }
  return value as WireObject;
}

export function readString(object: WireObject, key: string, fallback: string): string {
  const value = object[key];
  return typeof value === "string" ? value : fallback;
}

export function readNullableString(object: WireObject, key: string): string | null {
  const value = object[key];
  return typeof value === "string" ? value : null;
}

export function readNumber(object: WireObject, key: string, fallback: number): number {
  const value = object[key];
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

export function readBoolean(object: WireObject, key: string, fallback: boolean): boolean {
  const value = object[key];
  return typeof value === "boolean" ? value : fallback;
}

/** Copies entries whose value is not `undefined`, so values omit fields at their defaults. */
export function compact(object: WireObject): WireObject {
  const result: WireObject = {};
  // A `for...in` over the object's own fields (the callers pass fresh plain literals), without the entry pairs `Object.entries` allocates.
  for (const key in object) {
    const value = object[key];
    if (value !== undefined && Object.hasOwn(object, key)) result[key] = value;
  }
  return result;
}


/** A copy of `value` without `keys`, so a value omits fields that no longer apply. */
export function withoutFields<TValue extends object, TKey extends keyof TValue>(value: TValue, keys: readonly TKey[]): Omit<TValue, TKey> {
  const copy: Partial<TValue> = { ...value };
  for (const key of keys) delete copy[key];
  return copy as Omit<TValue, TKey>;
}
