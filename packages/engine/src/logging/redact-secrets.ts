/**
 * Removes secrets from what is about to be logged: passwords in connection
 * URLs and `password=` settings, `Authorization` / `Cookie` header values and
 * bearer tokens, in text and in the fields of log entries.
 */

/** What a removed secret is replaced with. */
export const redactedText = "[redacted]";

/** Header and field names whose values are secrets wherever they appear. */
const secretFieldNames = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie", "password", "passwd", "token", "secret", "apikey", "api_key", "api-key", "x-api-key", "access_token", "refresh_token", "databaseurl", "database_url", "connectionstring"]);

const textRules: ReadonlyArray<[RegExp, string]> = [
  // scheme://user:password@host → scheme://user:[redacted]@host
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]+@/gi, `$1${redactedText}@`],
  // Authorization: Bearer x, Cookie: a=b (to the end of the line)
  [/\b((?:proxy-)?authorization|cookie|set-cookie)(["']?\s*[:=]\s*)("[^"]*"|'[^']*'|[^\n,})]+)/gi, `$1$2${redactedText}`],
  [/\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${redactedText}`],
  // libpq key=value connection strings and query parameters: password=x
  [/\b(password|passwd|sslpassword)=([^\s&;]+)/gi, `$1=${redactedText}`],
];

/** `text` with every secret the rules recognise replaced by `[redacted]`. */
export function redactSecretsInText(text: string): string {
  let redacted = text;
  for (const [pattern, replacement] of textRules) redacted = redacted.replace(pattern, replacement);
  return redacted;
}

/**
 * A copy of `value` fit for a log: secrets removed from strings, secret
 * fields (`authorization`, `cookie`, `password`, …) replaced, and errors
 * turned into `{ type, message, stack, code, cause }` with the same removal.
 */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactSecretsInText(value);
  if (value === null || typeof value !== "object") return value;
  if (depth > 8) return "[too deep]";
  if (value instanceof Error) {
    const error = value as Error & { code?: unknown; cause?: unknown };
    return {
      type: error.name,
      message: redactSecretsInText(error.message),
      stack: error.stack === undefined ? undefined : redactSecretsInText(error.stack),
      ...(error.code === undefined ? {} : { code: redactSecrets(error.code, depth + 1) }),
      ...(error.cause === undefined ? {} : { cause: redactSecrets(error.cause, depth + 1) }),
    };
  }
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, depth + 1));
  if (value instanceof Headers) return redactSecrets(Object.fromEntries(value.entries()), depth + 1);
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    copy[key] = secretFieldNames.has(key.toLowerCase()) && field !== null && field !== undefined ? redactedText : redactSecrets(field, depth + 1);
  }
  return copy;
}
