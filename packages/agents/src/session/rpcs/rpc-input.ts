import { describeValue } from "@perdure/engine";

/** Reads an RPC input object field by its camelCase or its snake_case (wire) name. */
export function inputObject(raw: unknown, rpcName: string): Record<string, unknown> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new TypeError(`${rpcName} takes an object, got ${describeValue(raw)}`);
  }
  return raw as Record<string, unknown>;
}

export function inputField(object: Record<string, unknown>, camelName: string, snakeName: string): unknown {
  return Object.hasOwn(object, camelName) ? object[camelName] : object[snakeName];
}

