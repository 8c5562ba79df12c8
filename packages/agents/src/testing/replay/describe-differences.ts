/** Readable differences between two JSON values: the paths where they part, with both sides. */

const shownCharacters = 160;

function show(value: unknown): string {
  if (value === undefined) return "(absent)";
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > shownCharacters ? `${text.slice(0, shownCharacters - 1)}…` : text;
}

function collect(recorded: unknown, actual: unknown, path: string, found: string[], limit: number): void {
  if (found.length >= limit) return;
  if (Object.is(recorded, actual)) return;
  const bothArrays = Array.isArray(recorded) && Array.isArray(actual);
  const bothObjects = !bothArrays && typeof recorded === "object" && recorded !== null && typeof actual === "object" && actual !== null && !Array.isArray(recorded) && !Array.isArray(actual);
  if (bothArrays) {
    const length = Math.max(recorded.length, actual.length);
    for (let index = 0; index < length && found.length < limit; index += 1) collect(recorded[index], actual[index], `${path}[${index}]`, found, limit);
    return;
  }
  if (bothObjects) {
    const keys = [...new Set([...Object.keys(recorded), ...Object.keys(actual)])];
    for (const key of keys) collect((recorded as Record<string, unknown>)[key], (actual as Record<string, unknown>)[key], path === "" ? key : `${path}.${key}`, found, limit);
    return;
  }
  found.push(`  ${path === "" ? "(the whole value)" : path}\n    recorded: ${show(recorded)}\n    now:      ${show(actual)}`);
}

/** Up to `limit` differing paths of two JSON values, each with the recorded and the current value; empty when equal. */
export function describeDifferences(recorded: unknown, actual: unknown, limit = 5): string[] {
  const found: string[] = [];
  collect(JSON.parse(JSON.stringify(recorded ?? null)) as unknown, JSON.parse(JSON.stringify(actual ?? null)) as unknown, "", found, limit);
  return found;
}
