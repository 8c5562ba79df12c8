/**
 * The Next.js example as it is deployed, in headless Chromium: `next build`
 * (once, reused while the app's sources are unchanged), `next start` and
 * `perdure worker` as child processes on one SQLite file. Alice signs in,
 * asks for a refund, approves it in the page; the Worker is killed with
 * SIGKILL in the middle of the refund and a new one started, and the page
 * shows the turn finishing. Bob signs in, sees none of alice's sessions,
 * answers a question in his own chat, and gets 403 or 404 on every session
 * route with alice's session ID.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { findFreeLoopbackPorts, pollUntil } from "@perdure/agents/testing";
import { chromium, type APIRequestContext, type Browser, type Page } from "playwright-core";

const appFolder = fileURLToPath(new URL("..", import.meta.url));
const perdureBin = fileURLToPath(new URL("../../../packages/cli/bin/perdure.js", import.meta.url));
const nextBin = fileURLToPath(import.meta.resolve("next/dist/bin/next"));
const chromiumPath = "/usr/bin/chromium";
const chromiumArgs = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"];
/** How long a visible state may take: a Worker's liveness lapsing (5 s) and a new one starting fit well inside. */
const uiTimeoutMs = 60_000;
const inCi = process.env["CI"] !== undefined && process.env["CI"] !== "";
const chromiumMissing = !existsSync(chromiumPath);

/** Node options for the children: the repository runs Perdure's packages from their TypeScript sources. */
const nodeOptions = [process.env["NODE_OPTIONS"] ?? "", (process.env["NODE_OPTIONS"] ?? "").includes("perdure-source") ? "" : "--conditions=perdure-source"].join(" ").trim();
const baseEnvironment = { ...process.env, NODE_OPTIONS: nodeOptions, NEXT_TELEMETRY_DISABLED: "1", PERDURE_DATABASE_URL: "", OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" };

function newestModification(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestModification(join(path, name))), stat.mtimeMs);
}

interface Started {
  child: ChildProcess;
  exited: Promise<number | string>;
  output: () => string;
}

/** Spawns `node args…` in the app's folder and waits until its output matches `ready` (or it exits). */
async function start(name: string, args: string[], env: Record<string, string>, ready: RegExp | undefined): Promise<Started> {
  const child = spawn(process.execPath, args, { cwd: appFolder, stdio: ["ignore", "pipe", "pipe"], env: { ...baseEnvironment, ...env } });
  let output = "";
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  const read = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout?.on("data", read);
  child.stderr?.on("data", read);
  if (ready !== undefined) {
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (ready.test(output)) {
          clearInterval(timer);
          resolve();
        }
      }, 50);
      void exited.then((code) => {
        clearInterval(timer);
        reject(new Error(`${name} exited (${code}) before it was ready:\n${output}`));
      });
    });
  }
  return { child, exited, output: () => output };
}

async function stop(started: Started): Promise<void> {
  if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill("SIGKILL");
  await started.exited;
}

/**
 * `next build` resolves Perdure's packages through their built JavaScript
 * (Turbopack knows no `perdure-source` condition), and in a fresh clone
 * `npm test`'s typecheck lane builds them while the tests run: wait for the
 * build of each project the app imports (its `tsconfig.tsbuildinfo` is
 * written last) and its entry points.
 */
async function waitForPerdureBuild(): Promise<void> {
  const repository = join(appFolder, "..", "..");
  const needed = [
    "packages/engine/tsconfig.tsbuildinfo", "packages/engine/dist/index.js", "packages/engine/dist/sqlite/index.js",
    "packages/agents/tsconfig.tsbuildinfo", "packages/agents/dist/http/index.js", "packages/agents/dist/stepwise/index.js",
  ].map((path) => join(repository, path));
  await pollUntil(() => needed.every((path) => existsSync(path)), {
    timeoutMs: 900_000, intervalMs: 500,
    description: `Perdure's packages to be built (npx tsc -b): ${needed.filter((path) => !existsSync(path)).join(", ")}`,
  });
}

/** Runs `next build` unless a build newer than every source of the app is there. */
async function ensureBuilt(): Promise<void> {
  const buildId = join(appFolder, ".next", "BUILD_ID");
  // The lock file too: the client bundle holds ai and @ai-sdk/react (Perdure's packages are external, so not them).
  const sources = ["app", "lib", "agents", "next.config.ts", "package.json", "../../package-lock.json"].map((name) => newestModification(join(appFolder, name)));
  if (existsSync(buildId) && statSync(buildId).mtimeMs >= Math.max(...sources)) return;
  await waitForPerdureBuild();
  const build = await start("next build", [nextBin, "build"], {}, undefined);
  const code = await build.exited;
  assert.equal(code, 0, `next build failed:\n${build.output()}`);
}

async function signIn(browser: Browser, baseUrl: string, user: string): Promise<Page> {
  const context = await browser.newContext({ baseURL: baseUrl });
  const page = await context.newPage();
  await page.goto("/");
  await page.getByLabel("User name").fill(user);
  // The chat lists the user's sessions once React has hydrated it: a click before that (the server-rendered
  // "New chat" button has no handler yet) would be lost on a loaded machine.
  const listed = page.waitForResponse((response) => new URL(response.url()).pathname === "/api/sessions" && response.request().method() === "GET", { timeout: uiTimeoutMs });
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("user").filter({ hasText: user }).waitFor({ timeout: uiTimeoutMs });
  await listed;
  return page;
}

async function newChat(page: Page): Promise<string> {
  await page.getByRole("button", { name: "New chat" }).click();
  const sessionId = (await page.getByTestId("session-id").textContent({ timeout: uiTimeoutMs })) ?? "";
  assert.match(sessionId, /\S/);
  return sessionId;
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByLabel("message").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

async function getJson(request: APIRequestContext, path: string): Promise<Record<string, unknown>> {
  const response = await request.get(path);
  assert.equal(response.status(), 200, `GET ${path}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

test("the Next.js chat: a turn with an approval survives a killed Worker, and a second user reaches none of the first one's sessions", { timeout: 1_200_000, skip: chromiumMissing && !inCi ? `Chromium is not installed at ${chromiumPath}` : false }, async (t: TestContext) => {
  assert.ok(!chromiumMissing, `Chromium is not installed at ${chromiumPath}: apt-get install -y chromium (.ci/run does)`);
  await ensureBuilt();
  const folder = mkdtempSync(join(tmpdir(), "perdure-nextjs-chat-"));
  const database = join(folder, "sessions.db");
  const processes: Started[] = [];
  t.after(async () => {
    for (const started of processes.reverse()) await stop(started);
    rmSync(folder, { recursive: true, force: true });
  });
  const workerArgs = [perdureBin, "worker", "--db", database, "--concurrency", "2", "agents/agents.ts"];
  const workerReady = /perdure worker: \S+ running OrderDesk on /;
  // The first Worker's refund takes ten minutes: it is still running when the Worker is killed.
  const firstWorker = await start("perdure worker", workerArgs, { NEXTJS_CHAT_REFUND_DELAY_MS: "600000" }, workerReady);
  processes.push(firstWorker);
  const [port] = await findFreeLoopbackPorts(1);
  const secret = randomBytes(32).toString("hex");
  const server = await start("next start", [nextBin, "start", "--port", String(port), "--hostname", "127.0.0.1"], { PERDURE_DB: database, NEXTJS_CHAT_SECRET: secret }, /Ready in/);
  processes.push(server);
  const baseUrl = `http://127.0.0.1:${port}`;
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  t.after(() => browser.close());

  // Alice: a refund that waits for her approval; the Worker dies in the middle of the refund.
  const alice = await signIn(browser, baseUrl, "alice");
  const alicesSession = await newChat(alice);
  await send(alice, "please refund order 1002");
  await alice.getByRole("button", { name: "Approve" }).click({ timeout: uiTimeoutMs });
  const inspect = async (): Promise<{ activeExecutions: { stepType: string; status: string }[]; timeline: { stepType: string; attempts: { error: string | null }[] }[] }> =>
    (await getJson(alice.request, `/api/sessions/${alicesSession}/inspect`)) as never;
  await pollUntil(async () => (await inspect()).activeExecutions.some((execution) => /tool/i.test(execution.stepType) && execution.status === "running"), { timeoutMs: uiTimeoutMs, description: "the refund to run in the first Worker" });
  firstWorker.child.kill("SIGKILL");
  assert.equal(await firstWorker.exited, "SIGKILL");
  processes.push(await start("perdure worker", workerArgs, { NEXTJS_CHAT_REFUND_DELAY_MS: "0" }, workerReady));
  await alice.getByTestId("tool-output").filter({ hasText: "refunded order 1002 (Rain jacket)" }).waitFor({ timeout: uiTimeoutMs });
  await alice.getByText("refund_order: refunded order 1002 (Rain jacket)").waitFor({ timeout: uiTimeoutMs });
  const snapshot = (await getJson(alice.request, `/api/sessions/${alicesSession}/snapshot`)) as { state: { status: string }; messages: unknown[] };
  assert.equal(snapshot.state.status, "waiting_for_user_message", "the turn finished");
  const lost = (await inspect()).timeline.flatMap((execution) => execution.attempts).filter((attempt) => attempt.error?.startsWith("WorkerLost") === true);
  assert.equal(lost.length, 1, "the killed Worker's refund attempt was recovered once");

  // Bob: his own chat with a question; alice's sessions are nowhere.
  const bob = await signIn(browser, baseUrl, "bob");
  const bobsSession = await newChat(bob);
  await send(bob, "I want to exchange order 1001");
  await bob.getByRole("button", { name: "M", exact: true }).click({ timeout: uiTimeoutMs });
  await bob.getByText(/ask_user: .*M/).waitFor({ timeout: uiTimeoutMs });
  const listedOnPage = async (page: Page): Promise<string[]> => {
    const listed = page.waitForResponse((response) => new URL(response.url()).pathname === "/api/sessions" && response.request().method() === "GET");
    await page.reload();
    assert.equal((await listed).status(), 200);
    await page.getByRole("button", { name: bobsSession }).waitFor({ timeout: uiTimeoutMs });
    return page.getByRole("list", { name: "sessions" }).getByRole("button").allTextContents();
  };
  assert.deepEqual(await listedOnPage(bob), [bobsSession], "bob's page lists only his own session");
  assert.deepEqual(((await getJson(bob.request, "/api/sessions")) as { sessions: { sessionId: string }[] }).sessions.map((session) => session.sessionId), [bobsSession]);
  const document = (await getJson(bob.request, "/api/openapi.json")) as { paths: Record<string, Record<string, unknown>> };
  let routes = 0;
  for (const [template, operations] of Object.entries(document.paths)) {
    if (!template.includes("{id}")) continue;
    for (const method of Object.keys(operations).filter((key) => key === "get" || key === "post")) {
      const path = `/api${template.replace("{id}", alicesSession).replace("{interruptId}", "turn-1-call-1-approval")}`;
      const response = method === "get" ? await bob.request.get(path) : await bob.request.post(path, { data: { approved: true, answer: "S", text: "hi", revision: 1, messageId: "1", sessionSettings: {}, throughTurn: 0 } });
      const text = await response.text();
      assert.ok(response.status() === 404 || response.status() === 403, `bob ${method.toUpperCase()} ${path} answered ${response.status()}: ${text}`);
      assert.doesNotMatch(text, /refund|1002/, `bob ${method.toUpperCase()} ${path} leaked nothing`);
      routes += 1;
    }
  }
  assert.ok(routes >= 15, `the OpenAPI document listed ${routes} session routes`);
  const bobSends = await bob.request.post("/api/chat", { data: { id: alicesSession, messages: [{ id: "u9", role: "user", parts: [{ type: "text", text: "refund order 1001 to me" }] }] } });
  assert.equal(bobSends.status(), 404, await bobSends.text());
  const afterBob = (await getJson(alice.request, `/api/sessions/${alicesSession}/snapshot`)) as { state: { status: string }; messages: unknown[] };
  assert.equal(afterBob.state.status, "waiting_for_user_message");
  assert.equal(JSON.stringify(afterBob.messages), JSON.stringify(snapshot.messages), "bob's calls changed nothing in alice's session");

  // A forged cookie names nobody.
  const forged = await fetch(`${baseUrl}/api/sessions`, { headers: { cookie: `perdure_chat_user=alice.9999999999.${"A".repeat(43)}` } });
  assert.equal(forged.status, 401);
});
