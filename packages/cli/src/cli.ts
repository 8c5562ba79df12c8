#!/usr/bin/env node
/**
 * `perdure`: the dev server and tools for durable agent sessions.
 *
 *   perdure dev [--port 4100] [--host 127.0.0.1] [--db .perdure/dev.db] [--token-file ...] [--allow-origin ...] [entry]
 *   perdure worker [--db .perdure/dev.db] [--concurrency 8] [--drain-timeout 25s] [entry]
 *   perdure sessions [--db ...] [--entry ...]
 *   perdure inspect <sessionId> [--db ...] [--entry ...]
 *   perdure chat <sessionId> [--db ...] [--entry ...]
 *   perdure export <sessionId> [--out <file>] [--as-test] [--db ...] [--entry ...]
 *   perdure check-node
 *   perdure --version
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Client, Worker } from "@perdure/engine";
import { runChatCommand } from "./commands/chat.ts";
import { runExportCommand } from "./commands/export.ts";
import { runInspectCommand } from "./commands/inspect.ts";
import { runSessionsCommand } from "./commands/sessions.ts";
import { defaultEntryName, findDefaultEntry } from "./entry/find-default-entry.ts";
import { loadAgentFlows } from "./entry/load-agent-flows.ts";
import { migrateConfiguredStore, openConfiguredStore } from "./store/open-configured-store.ts";
import { resolveLogFormat } from "./logging/log-format.ts";

const defaultEntry = defaultEntryName;

/** This package's version, from its package.json (one folder up from both src/ and dist/). */
function ownVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: unknown };
  return String(manifest.version);
}

const helpTexts: Record<string, string> = {
  main: `perdure: run and inspect durable agent sessions

Usage: perdure <command> [options]

Commands:
  dev [entry]          Start the dev server: store, Worker, HTTP API and web UI
  worker [entry]       Run Workers only (no HTTP API); SIGTERM drains, then exits
  sessions             List sessions with their status
  inspect <sessionId>  Print a session's Step timeline and state
  chat <sessionId>     Chat with a session in the terminal: approvals, questions, plans
  export <sessionId>   Write a session as a replay fixture (JSON) or, with --as-test, a node:test file
  migrate              Apply the PostgreSQL store's migrations (PERDURE_DATABASE_URL)
  check-node           Exit 1 with how to install Node 24 when this Node.js is too old

Common options:
  --db <path>          SQLite file (default .perdure/dev.db); PERDURE_DATABASE_URL selects PostgreSQL
                       (postgres://user:password@host:5432/db, ?schema=name for a schema other than perdure)
  --entry <module>     Module exporting agent session Flows (default ${defaultEntry},
                       or the one *.agents.ts file in this folder)
  -h, --help           Show help for a command
  -v, --version        Print perdure's version

Run "perdure <command> --help" for a command's options.`,
  dev: `Usage: perdure dev [--port 4100] [--host 127.0.0.1] [--db .perdure/dev.db] [--token-file <path>] [--allow-origin <origin>]... [entry]

Opens the store, starts a Worker for every agent session Flow the entry module
exports, and serves the HTTP API and web UI on loopback. The entry defaults
to ${defaultEntry}. Without OPENAI_API_KEY or ANTHROPIC_API_KEY the example agent
uses its scripted demo model. With OTEL_EXPORTER_OTLP_ENDPOINT set (such as
http://127.0.0.1:4318) it exports the sessions' OpenTelemetry spans over
OTLP/HTTP.

  --host <name>            Address to listen on (default 127.0.0.1). Any other
                           than loopback requires an access token.
  --token-file <path>      File holding the access token every request must
                           carry. Or set PERDURE_DEV_TOKEN. Without either, a
                           non-loopback host gets a generated token, printed
                           in the address; a token you give is never printed.
  --token <token>          The token on the command line, which every local
                           user can read in the process list; prefer the two
                           above.
  --allow-origin <origin>  A separate front end (such as http://localhost:5173)
                           that may call the API; repeatable.
  --metrics-port <port>    Serve /metrics, /healthz and /readyz on this port
                           (see perdure worker --help; --metrics-host and
                           --metrics-token as there).
  --log-format <format>    pretty (the default) or json; or PERDURE_LOG_FORMAT.`,
  worker: `Usage: perdure worker [--db .perdure/dev.db] [--concurrency 8] [--drain-timeout 25s] [entry]

Runs a Worker for every agent session Flow the entry module exports, and
nothing else: no HTTP API, no web UI. Run it beside web servers that mount
the session HTTP handler on the same store (see docs/deploy.md). The entry
defaults to ${defaultEntry}. On SQLite it commits with fsync durability.

  --concurrency <n>        Steps run at once (default 8).
  --drain-timeout <time>   On SIGTERM or Ctrl-C: stop claiming, let running
                           Steps finish for up to this long (default 25s,
                           under the usual 30 s grace period), release the
                           rest so another Worker takes them at once, exit 0.
                           A second signal exits at once (143, or 130 for
                           Ctrl-C).
  --metrics-port <port>    Serve /metrics (Prometheus format), /healthz and
                           /readyz on this port (0 picks a free one).
  --metrics-host <name>    Address for them (default 127.0.0.1); any other
                           than loopback requires --metrics-token.
  --metrics-token <token>  Bearer token the scraper and probes must send
                           (or PERDURE_METRICS_TOKEN).
  --log-format <format>    json (one JSON object per line, the default when
                           stderr is not a terminal) or pretty (readable
                           lines); or PERDURE_LOG_FORMAT.`,
  sessions: `Usage: perdure sessions [--db .perdure/dev.db] [--entry ${defaultEntry}]

Lists every session of the entry's agents, newest first, with the Flow status,
the agent status and the number of turns.`,
  inspect: `Usage: perdure inspect <sessionId> [--db .perdure/dev.db] [--entry ${defaultEntry}]

Prints the session's Step timeline (each Step execution with its attempts,
durations and errors), pending interrupts and usage.`,
  migrate: `Usage: perdure migrate   (with PERDURE_DATABASE_URL=postgres://...)

Applies the PostgreSQL store's ordered migrations and prints the ones it
applied. Stores also migrate when they first open; run this as a deployment
step so Workers start on a ready schema. Safe when several run at once.`,
  export: `Usage: perdure export <sessionId> [--out <file>] [--as-test] [--db .perdure/dev.db] [--entry ${defaultEntry}]

Writes the session's ended turns as a fixture: each turn's user messages and
settings, its model calls (request and response) and its tool calls with
their effect classes, as JSON, to stdout or --out. With --as-test it writes a
node:test file instead, which replays the fixture against the entry module's
agent (replaySession of @perdure/agents/testing) and fails on the first
divergence. Reading the session never changes it.

  --out <file>   Write here instead of stdout (the test imports the entry
                 relative to this file).
  --as-test      Write the replay test instead of the fixture.`,
  "check-node": `Usage: perdure check-node

Prints nothing and exits 0 when this Node.js runs Perdure (22.18 or later);
otherwise prints the version found, the version needed and how to install
Node 24 from the npm registry, and exits 1. Put it before commands that
would fail in obscure ways on an old Node, such as "perdure check-node &&
node --test".`,
  chat: `Usage: perdure chat <sessionId> [--db .perdure/dev.db] [--entry ${defaultEntry}] [--no-worker]

Chats with a session in the terminal (starting it when new). Approvals are
asked as y/N questions; answer the agent's questions with a choice's number
or your text, or /decline [why]. /plan <text> sends a message in plan mode,
and a drafted plan is offered for execution when its turn ends. A Worker runs
in this process unless --no-worker is given (use that while perdure dev runs
on the same store). Type /quit to leave.`,
};

/** A mistake on the command line: printed with the command's usage, exit 2. */
class UsageError extends Error {}

/**
 * `perdure dev`'s access token: from `--token-file` (its first line), else
 * `--token`, with a warning that the command line is public, else
 * `PERDURE_DEV_TOKEN`; undefined when none is given.
 */
function readDevToken(flagToken: string | undefined, tokenFile: string | undefined, environmentToken: string | undefined): string | undefined {
  if (flagToken !== undefined && tokenFile !== undefined) throw new UsageError("give --token-file or --token, not both");
  if (tokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(tokenFile, "utf8");
    } catch (error) {
      throw new UsageError(`--token-file ${JSON.stringify(tokenFile)} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    const token = text.split(/\r?\n/)[0]?.trim() ?? "";
    if (token === "") throw new UsageError(`--token-file ${JSON.stringify(tokenFile)} is empty; write the token on its first line`);
    return token;
  }
  if (flagToken !== undefined) {
    console.error("perdure dev: warning: --token is readable by every local user in the process list; pass the token in PERDURE_DEV_TOKEN or --token-file instead");
    return flagToken;
  }
  return environmentToken;
}

function parseCommandLine(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
        port: { type: "string" },
        host: { type: "string" },
        db: { type: "string" },
        entry: { type: "string" },
        "no-worker": { type: "boolean" },
        token: { type: "string" },
        "token-file": { type: "string" },
        "allow-origin": { type: "string", multiple: true },
        out: { type: "string" },
        "as-test": { type: "boolean" },
        concurrency: { type: "string" },
        "drain-timeout": { type: "string" },
        "metrics-port": { type: "string" },
        "metrics-host": { type: "string" },
        "metrics-token": { type: "string" },
        "log-format": { type: "string" },
      },
    });
  } catch (error) {
    // Node's parser names the option in its own words; keep only that part.
    const message = error instanceof Error ? error.message.split(". ")[0] ?? error.message : String(error);
    throw new UsageError(message.replace(/^Unknown option/, "unknown option").replace(/^Option/, "option"));
  }
}

/** `--metrics-port`, `--metrics-host` and `--metrics-token` of `perdure worker` and `perdure dev`. */
function operationsOptionsOf(
  values: ReturnType<typeof parseCommandLine>["values"],
  parsePort: (optionName: string, text: string) => number,
): { port: number; host: string; token: string | undefined } | undefined {
  if (values["metrics-port"] === undefined) return undefined;
  return {
    port: parsePort("--metrics-port", values["metrics-port"]),
    host: values["metrics-host"] ?? "127.0.0.1",
    token: values["metrics-token"] ?? process.env.PERDURE_METRICS_TOKEN,
  };
}

async function main(argv: readonly string[]): Promise<number> {
  const commandName = argv.find((argument) => !argument.startsWith("-"));
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    const usage = commandName === undefined ? undefined : helpTexts[commandName];
    console.error(`perdure${usage === undefined ? "" : ` ${commandName}`}: ${error.message}\n\n${usage ?? helpTexts.main}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.version === true) {
    console.log(ownVersion());
    return 0;
  }
  if (command === undefined || command === "help") {
    console.log(helpTexts.main);
    return 0;
  }
  const help = helpTexts[command];
  if (help === undefined || command === "main") {
    console.error(`perdure: unknown command ${JSON.stringify(command)}\n\n${helpTexts.main}`);
    return 2;
  }
  if (values.help === true) {
    console.log(help);
    return 0;
  }
  // bin/perdure.js checked the version before loading this module.
  if (command === "check-node") return 0;
  const location = { databasePath: values.db ?? ".perdure/dev.db", databaseUrl: process.env.PERDURE_DATABASE_URL };
  if (command === "migrate") {
    const applied = await migrateConfiguredStore(location);
    console.log(applied.length === 0 ? "the schema is up to date" : `applied ${applied.join(", ")}`);
    return 0;
  }
  if (command === "dev") {
    const port = Number(values.port ?? process.env.PORT ?? "4100");
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`--port ${JSON.stringify(values.port)} is invalid: use 0 to 65535`);
    let token: string | undefined;
    try {
      token = readDevToken(values.token, values["token-file"], process.env.PERDURE_DEV_TOKEN);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      console.error(`perdure dev: ${error.message}\n\n${help}`);
      return 2;
    }
    // The HTTP server and its dependencies load only for this command.
    const { startDevServer } = await import("./commands/dev.ts");
    const server = await startDevServer({
      entry: rest[0] ?? values.entry ?? findDefaultEntry(process.cwd()),
      port,
      host: values.host ?? "127.0.0.1",
      token,
      allowedOrigins: values["allow-origin"] ?? [],
      operations: operationsOptionsOf(values, (await import("./commands/worker.ts")).parsePort),
      logFormat: resolveLogFormat(values["log-format"], process.stderr.isTTY, "pretty"),
      ...location,
    });
    await new Promise<void>((resolve) => {
      const stop = (): void => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    await server.close();
    return 0;
  }
  if (command === "worker") {
    const { parseConcurrency, parseDuration, parsePort, runWorkerCommand } = await import("./commands/worker.ts");
    const code = await runWorkerCommand({
      entry: rest[0] ?? values.entry ?? findDefaultEntry(process.cwd()),
      concurrency: values.concurrency === undefined ? 8 : parseConcurrency(values.concurrency),
      drainTimeoutMs: parseDuration("--drain-timeout", values["drain-timeout"] ?? "25s"),
      operations: operationsOptionsOf(values, parsePort),
      logFormat: resolveLogFormat(values["log-format"], process.stderr.isTTY),
      ...location,
    });
    // A released Step's handler may ignore its abort signal; it must not outlive the drain.
    process.exit(code);
  }
  const sessionId = rest[0];
  if (command !== "sessions" && sessionId === undefined) {
    console.error(`perdure ${command}: give a session ID\n\n${help}`);
    return 2;
  }
  const entry = values.entry ?? findDefaultEntry(process.cwd());
  if (!existsSync(entry)) throw new Error(`entry module ${entry} does not exist; pass --entry <module exporting your agent Flows>`);
  const flows = await loadAgentFlows(entry);
  // Reading commands must not create an empty store where the user mistyped a path.
  const { store, description } = await openConfiguredStore(location, { mustExist: command !== "chat" });
  const client = new Client({ store });
  try {
    if (command === "sessions") {
      console.log(await runSessionsCommand(client, flows));
      return 0;
    }
    if (sessionId === undefined) return 2;
    if (command === "inspect") {
      console.log(await runInspectCommand(client, flows, sessionId, description));
      return 0;
    }
    if (command === "export") {
      const text = await runExportCommand(client, flows, { sessionId, outPath: values.out, entryPath: entry, asTest: values["as-test"] === true, storeDescription: description });
      if (values.out === undefined) process.stdout.write(text);
      else writeFileSync(values.out, text);
      return 0;
    }
    const flow = [...flows.values()][0];
    if (flow === undefined) return 1;
    const worker = values["no-worker"] === true ? undefined : new Worker({ store, flows: [...flows.values()] });
    await worker?.start();
    try {
      await runChatCommand(client, flow, sessionId, process.stdin, process.stdout);
    } finally {
      await worker?.close();
    }
    return 0;
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (error: unknown) => {
  console.error(`perdure: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
