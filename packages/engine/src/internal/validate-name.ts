import { InvalidDefinitionError } from "../errors/invalid-definition-error.ts";

const namePattern = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;

/** Checks a definition name (Flow type, Step type, persistence name, RPC name). */
export function validateName(kind: string, name: unknown): string {
  if (typeof name !== "string" || !namePattern.test(name)) {
    throw new InvalidDefinitionError(
      `${kind} name ${JSON.stringify(name)} is invalid: use 1 to 128 characters, starting with a letter or "_", then letters, digits, "_", ".", ":" or "-"`,
    );
  }
  return name;
}

/** Checks a map instance key: a non-empty string of at most 512 characters. */
export function validateInstanceKey(mapName: string, key: unknown): string {
  if (typeof key !== "string" || key.length === 0 || key.length > 512) {
    throw new InvalidDefinitionError(
      `instance key ${JSON.stringify(key)} of ${mapName} is invalid: use a non-empty string of at most 512 characters`,
    );
  }
  return key;
}
