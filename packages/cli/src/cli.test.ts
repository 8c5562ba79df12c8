import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client, Worker } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import { loadAgentFlows } from "./entry/load-agent-flows.ts";
import { importPostgresStore } from "./store/open-configured-store.ts";

const cliPath = fileURLToPath(new URL("./cli.ts", import.meta.url));
const repositoryRoot = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const entryPath = join(repositoryRoot, "examples/support-agent/src/agents.ts");

function runCli(args: string[], cwd = repositoryRoot): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cliPath, ...args], { encoding: "utf8", cwd, env: { ...process.env, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" }, timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test("perdure --help and every command's --help describe their usage", () => {
  const main = runCli(["--help"]);
  assert.equal(main.status, 0);
  for (const command of ["dev", "worker", "sessions", "inspect", "chat"]) assert.match(main.stdout, new RegExp(`\\n  ${command}`));
  for (const command of ["dev", "worker", "sessions", "inspect", "chat", "migrate"]) {
    const help = runCli([command, "--help"]);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, new RegExp(`^Usage: perdure ${command}`));
  }
  const unknown = runCli(["launch"]);
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /unknown command "launch"/);
});

test("perdure --version and -v print the package's version", () => {
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
  for (const flag of ["--version", "-v"]) {
    const result = runCli([flag]);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout, `${version}\n`);
  }
});

test("PostgreSQL asked for without the pg package says to install it", async () => {
  const missingPg = Object.assign(new Error("Cannot find package 'pg' imported from /app/node_modules/@perdure/engine/dist/postgres/postgres-store.js"), { code: "ERR_MODULE_NOT_FOUND" });
  await assert.rejects(importPostgresStore(() => Promise.reject(missingPg)), {
    name: "InvalidInputError",
    message: "PERDURE_DATABASE_URL selects PostgreSQL, which needs the pg package: run npm install pg",
  });
  // Any other failure passes through unchanged.
  const other = Object.assign(new Error("Cannot find package 'pgvector'"), { code: "ERR_MODULE_NOT_FOUND" });
  await assert.rejects(importPostgresStore(() => Promise.reject(other)), (error) => error === other);
});

test("perdure with no arguments prints its help and exits 0", () => {
  const bare = runCli([]);
  assert.equal(bare.status, 0, bare.stderr);
  assert.match(bare.stdout, /^perdure: run and inspect durable agent sessions\n\nUsage: perdure <command>/);
});

test("an unknown option gets the command's usage, not the parser's own text", () => {
  const result = runCli(["sessions", "--dbb", "x.db"]);
  assert.equal(result.status, 2);
  assert.match(result.stderr, /^perdure sessions: unknown option '--dbb'\n\nUsage: perdure sessions /);
  assert.doesNotMatch(result.stderr, /ERR_PARSE_ARGS|at parseArgs|To specify a positional/);
  const general = runCli(["--verbose"]);
  assert.equal(general.status, 2);
  assert.match(general.stderr, /^perdure: unknown option '--verbose'\n\nperdure: run and inspect/);
});

test("sessions and inspect refuse a --db that names no store, creating nothing", () => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-cli-"));
  try {
    const missing = join(folder, "typo.db");
    for (const args of [["sessions"], ["inspect", "some-session"]]) {
      const result = runCli([...args, "--db", missing, "--entry", entryPath]);
      assert.equal(result.status, 1);
      assert.match(result.stderr, new RegExp(`^perdure: no store at ${missing.replaceAll("/", "\\/")}: pass --db`));
      assert.equal(existsSync(missing), false, `${args[0]} created the store`);
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test("an unreachable PERDURE_DATABASE_URL names the variable and the host and port tried", () => {
  const result = spawnSync(process.execPath, [cliPath, "sessions", "--entry", entryPath], {
    encoding: "utf8",
    cwd: repositoryRoot,
    env: { ...process.env, PERDURE_DATABASE_URL: "postgres://user:secret@127.0.0.1:1/nothing", OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" },
    timeout: 60_000,
  });
  assert.equal(result.status, 1);
  assert.match(result.stderr, /^perdure: PERDURE_DATABASE_URL: cannot open PostgreSQL at 127\.0\.0\.1:1 \(ECONNREFUSED\); start the server or fix the variable\n$/);
  assert.doesNotMatch(result.stderr, /secret/);
});

test("perdure sessions and perdure inspect read a real session from the store", async () => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-cli-"));
  const databasePath = join(folder, "dev.db");
  const store = SqliteStore.open({ path: databasePath, durability: "process-crash-safe", pollIntervalMs: 20 });
  const [flow] = (await loadAgentFlows(entryPath)).values();
  assert.ok(flow !== undefined);
  const worker = new Worker({ store, flows: [flow] });
  await worker.start();
  try {
    const sessions = new AgentSessionTestClient(new Client({ store }), flow);
    await sessions.start("cli-session");
    await sessions.sendUserMessage("cli-session", "Where is order 1001?");
    await sessions.waitForTurnCount("cli-session", 1);
    await worker.close();
    const client = new Client({ store });
    const updatedBefore = (await client.listFlows({ flowType: flow.flowType })).map((entry) => entry.updatedAt.getTime());
    const listed = runCli(["sessions", "--db", databasePath, "--entry", entryPath]);
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(listed.stdout, /cli-session\s+SupportAgent\s+running\s+waiting_for_user_message\s+1/);
    const inspected = runCli(["inspect", "cli-session", "--db", databasePath, "--entry", entryPath]);
    assert.equal(inspected.status, 0, inspected.stderr);
    for (const step of ["StartAgentSession", "AwaitUserMessage", "RunModel", "CallTool", "ResumeTurn"]) assert.match(inspected.stdout, new RegExp(step));
    assert.match(inspected.stdout, /messages 4 {2}usage \d+ tokens in 2 model calls/);
    // Reading never writes: the session keeps its place in the list.
    assert.deepEqual((await client.listFlows({ flowType: flow.flowType })).map((entry) => entry.updatedAt.getTime()), updatedBefore);
    // Without --entry, in a folder whose one entry module is named after its agent.
    writeFileSync(join(folder, "support.agents.ts"), `export { supportAgentFlow } from ${JSON.stringify(pathToFileURL(entryPath).href)};\n`);
    const found = runCli(["inspect", "cli-session", "--db", databasePath], folder);
    assert.equal(found.status, 0, found.stderr);
    assert.match(found.stdout, /^cli-session {2}SupportAgent/);
    const missing = runCli(["inspect", "no-such-session", "--db", databasePath, "--entry", entryPath]);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /^perdure: no session "no-such-session" in SQLite at .*dev\.db; perdure sessions lists them\n$/);
  } finally {
    await worker.close();
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  }
});

test("perdure dev refuses --token-file with --token, and an empty or missing token file, before it listens", () => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-cli-token-"));
  try {
    const empty = join(folder, "empty");
    writeFileSync(empty, "\n");
    const both = runCli(["dev", "--port", "0", "--db", join(folder, "dev.db"), "--token", "a", "--token-file", empty, entryPath]);
    assert.equal(both.status, 2);
    assert.match(both.stderr, /give --token-file or --token, not both/);
    const blank = runCli(["dev", "--port", "0", "--db", join(folder, "dev.db"), "--token-file", empty, entryPath]);
    assert.equal(blank.status, 2);
    assert.match(blank.stderr, /--token-file ".*empty" is empty; write the token on its first line/);
    const missing = runCli(["dev", "--port", "0", "--db", join(folder, "dev.db"), "--token-file", join(folder, "absent"), entryPath]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /--token-file ".*absent" cannot be read: ENOENT/);
    assert.equal(existsSync(join(folder, "dev.db")), false);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
