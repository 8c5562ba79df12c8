/**
 * A short, safe rendering of an untrusted value for an error message: JSON
 * cut to `maxLength` characters. It never throws, so a value nested too deep
 * to serialize, a cycle or a BigInt still gets a readable message instead of
 * turning a 400 into a crash.
 *
 * @example
 * throw new InvalidInputError(`session ID ${describeValue(body.id)} is invalid`);
 */
export function describeValue(value: unknown, maxLength = 80): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    if (Array.isArray(value)) return "an array that is not JSON";
    return typeof value === "object" && value !== null ? "an object that is not JSON" : String(typeof value);
  }
  return text.length > maxLength ? `${text.slice(0, maxLength)}…` : text;
}
