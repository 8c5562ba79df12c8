/**
 * The second front door, tested as a user meets it: pack every package,
 * create an app in an empty folder outside the repository with the packed
 * `create-perdure`, install the tarballs (no workspace links), run the app's
 * own tests, start `perdure dev` and drive a turn with an approval over its
 * HTTP API. Runs once per Node binary.
 *
 *   node scripts/consumer-test.ts                      # with this Node
 *   PERDURE_CONSUMER_NODES=/a/node:/b/node node scripts/consumer-test.ts
 */
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const workspaces = ["packages/engine", "packages/agents", "packages/cli", "packages/create-perdure"];

interface PackedFile { path: string; size: number }
interface Packed { name: string; filename: string; size: number; unpackedSize: number; files: PackedFile[] }

function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): string {
  const result = spawnSync(command, args, { cwd: options.cwd, env: options.env ?? process.env, encoding: "utf8", timeout: 600_000, maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} in ${options.cwd} failed (${String(result.status)}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Packs every package (its prepack builds it) and checks that no test, fixture or source file ships. */
function packAll(destination: string): Map<string, Packed> {
  const packed = new Map<string, Packed>();
  for (const workspace of workspaces) {
    // The package's own prepack builds it, as `npm publish` would run it; its output stays out of pack's JSON.
    run("npm", ["run", "prepack", "--if-present", "--workspace", workspace], { cwd: repositoryRoot });
    const [result] = JSON.parse(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", destination, "--workspace", workspace], { cwd: repositoryRoot })) as Packed[];
    assert.ok(result !== undefined);
    const shipped = result.files.map((file) => file.path);
    // The starter's template is the user's app, whose test ships on purpose.
    const forbidden = shipped.filter((path) => !path.startsWith("template/") && (/\.test\.|test-fixtures|crash-fixtures|\.tsbuildinfo$/.test(path) || (path.endsWith(".ts") && !path.endsWith(".d.ts"))));
    assert.deepEqual(forbidden, [], `${result.name} ships files it must not`);
    console.log(`packed ${result.name}: ${result.files.length} files, ${(result.size / 1024).toFixed(0)} kB packed, ${(result.unpackedSize / 1024).toFixed(0)} kB unpacked`);
    packed.set(result.name, { ...result, filename: join(destination, result.filename) });
  }
  return packed;
}

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

async function checkApp(nodeBinary: string, packed: Map<string, Packed>): Promise<void> {
  const environment = environmentFor(nodeBinary);
  const version = run(nodeBinary, ["--version"], { cwd: tmpdir() }).trim();
  const folder = mkdtempSync(join(tmpdir(), "perdure-consumer-"));
  try {
    const starter = packed.get("create-perdure")?.filename;
    assert.ok(starter !== undefined);
    // npm create perdure, from the packed starter.
    run("npm", ["exec", "--yes", `--package=${starter}`, "--", "create-perdure", "my-agent"], { cwd: folder, env: environment });
    const app = join(folder, "my-agent");
    const tarballs = ["@perdure/engine", "@perdure/agents", "perdure"].map((name) => packed.get(name)?.filename ?? "");
    run("npm", ["install", "--no-audit", "--no-fund", ...tarballs], { cwd: app, env: environment });
    const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    assert.ok(Object.values(manifest.dependencies).every((range) => range.startsWith("file:")), "the app must use the tarballs");
    run("npm", ["test"], { cwd: app, env: environment });
    // An optional peer that is not installed: the subpath says which package is missing.
    const withoutPeer = spawnSync(nodeBinary, ["--input-type=module", "-e", "await import('@perdure/agents/ai-sdk')"], { cwd: app, env: environment, encoding: "utf8" });
    assert.notEqual(withoutPeer.status, 0);
    assert.match(withoutPeer.stderr, /Cannot find package 'ai'/);
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
    console.log(`consumer app on Node ${version}: created, installed from tarballs, npm test passed, npm start served a turn with an approval`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const nodes = (process.env.PERDURE_CONSUMER_NODES ?? process.execPath).split(":").filter((path) => path !== "");
const destination = join(tmpdir(), `perdure-tarballs-${process.pid}`);
mkdirSync(destination, { recursive: true });
try {
  const packed = packAll(destination);
  for (const node of nodes) await checkApp(node, packed);
} finally {
  rmSync(destination, { recursive: true, force: true });
}
