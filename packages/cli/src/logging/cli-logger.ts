/**
 * The one logger of `perdure worker` and `perdure dev`: pino, writing JSON
 * lines (one object per entry, for a log pipeline) or, in a terminal, the
 * same entries as readable lines (`perdure dev: message`, then the error's
 * stack indented). Secrets are removed before anything is written.
 */
import { Writable } from "node:stream";
import { pino, type Logger } from "pino";
import { redactSecrets, redactSecretsInText, type PerdureLogger } from "@perdure/engine";
import type { LogFormat } from "./log-format.ts";

export interface CliLoggerOptions {
  /** The `name` of every entry and the prefix of a pretty line, such as `perdure worker`. */
  name: string;
  format: LogFormat;
  /** Where lines go. @default process.stderr */
  destination?: NodeJS.WritableStream;
  /** @default "info" */
  level?: "debug" | "info" | "warn" | "error";
}

interface SerializedError {
  type?: string;
  message?: string;
  stack?: string;
}

/** One pretty line: `name: message`, `: Type: message` of the error, then its stack frames indented. */
export function prettyLine(entry: Record<string, unknown>): string {
  const name = typeof entry.name === "string" ? `${entry.name}: ` : "";
  const message = typeof entry.msg === "string" ? entry.msg : "";
  const error = entry.err as SerializedError | undefined;
  if (error === undefined || typeof error !== "object" || error === null) return `${name}${message}\n`;
  const frames = (error.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line)).map((frame) => `    ${frame.trim()}`);
  return [`${name}${message}: ${error.type ?? "Error"}: ${error.message ?? ""}`, ...frames].join("\n") + "\n";
}

/** A stream that turns pino's JSON lines into pretty lines. */
function prettyStream(destination: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line === "") continue;
        try {
          destination.write(prettyLine(JSON.parse(line) as Record<string, unknown>));
        } catch {
          destination.write(`${line}\n`);
        }
      }
      done();
    },
  });
}

/**
 * The CLI's logger. Every argument of every call is copied with its secrets
 * removed (database URL passwords, authorization and cookie headers, bearer
 * tokens), and errors become `{ type, message, stack }` under `err`.
 *
 * @example
 * const logger = createCliLogger({ name: "perdure worker", format: "json" });
 * logger.error({ err, flowId: "s1" }, "a Step attempt failed");
 */
export function createCliLogger(options: CliLoggerOptions): Logger & PerdureLogger {
  const destination = options.destination ?? process.stderr;
  const stream = options.format === "pretty" ? prettyStream(destination) : destination;
  return pino({
    name: options.name,
    level: options.level ?? "info",
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    // Errors were already turned into { type, message, stack } with their secrets removed.
    serializers: { err: (value: unknown) => value },
    hooks: {
      logMethod(inputs, method) {
        const redacted = inputs.map((input) => (typeof input === "string" ? redactSecretsInText(input) : redactSecrets(input))) as Parameters<typeof method>;
        method.apply(this, redacted);
      },
    },
  }, stream);
}
