/**
 * `--log-format` of `perdure worker` and `perdure dev`, apart from the
 * logger so that reading the command line loads no logging library.
 */

/** `json`: one JSON object per line; `pretty`: readable lines for a terminal. */
export type LogFormat = "json" | "pretty";

/**
 * The format asked for in `--log-format` or `PERDURE_LOG_FORMAT`; else
 * `fallback`, else pretty in a terminal and JSON lines elsewhere.
 *
 * @example
 * resolveLogFormat(undefined, process.stderr.isTTY); // "json" under a supervisor
 */
export function resolveLogFormat(flag: string | undefined, isTerminal: boolean, fallback?: LogFormat): LogFormat {
  const asked = flag ?? process.env.PERDURE_LOG_FORMAT;
  if (asked === undefined || asked === "") return fallback ?? (isTerminal ? "pretty" : "json");
  if (asked !== "json" && asked !== "pretty") throw new Error(`--log-format ${JSON.stringify(asked)} is invalid: use json or pretty`);
  return asked;
}
