/**
 * What the `perdure dev` browser tests share: a temporary folder with the
 * store and the FileGates, the real CLI in a child process, headless Debian
 * Chromium through playwright-core, and helpers that find the chat's parts
 * on the page and read the stored conversation through the API.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestContext } from "node:test";
import { findFreeLoopbackPorts, InvocationLog, pollUntil } from "@perdure/agents/testing";
import { chromium, type BrowserContext, type Locator, type Page } from "playwright-core";
import { DevServerProcess, repositoryRoot } from "./dev-server-process.ts";

const webSource = join(repositoryRoot, "packages/cli/web");
const webIndex = join(repositoryRoot, "packages/cli/dist/web/index.html");
/** Screenshots go to a temporary folder; PERDURE_SCREENSHOTS_DIR=docs/images refreshes the README's images. */
const screenshotFolder = resolve(repositoryRoot, process.env.PERDURE_SCREENSHOTS_DIR ?? join(tmpdir(), "perdure-screenshots"));
const chromiumPath = "/usr/bin/chromium";
const chromiumArgs = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"];
const viewport = { width: 1440, height: 900 };
/** How long a visible state may take to appear: a restart and the lapse of the killed Worker's liveness fit well inside. */
export const uiTimeoutMs = 30_000;

/** The result the session gives a write whose Step was lost (`outcomeUnknownToolResult` of @perdure/agents). */
export const outcomeUnknownText = "The tool call was interrupted and its outcome is unknown: it may or may not have taken effect. Check before calling it again.";

const inCi = process.env["CI"] !== undefined && process.env["CI"] !== "";
const chromiumMissing = !existsSync(chromiumPath);
const missingChromiumMessage = `Debian chromium is not installed at ${chromiumPath}: run apt-get update && apt-get install -y chromium (.ci/run does)`;
/** Skip locally without Chromium; CI must never pass without running these. */
export const testOptions = { timeout: 120_000, skip: chromiumMissing && !inCi ? missingChromiumMessage : false };

function newestModification(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestModification(join(path, name))), stat.mtimeMs);
}

/** Builds the web UI when it is missing or older than its sources, with the repository's own script. */
async function ensureWebUiBuilt(): Promise<void> {
  if (existsSync(webIndex) && statSync(webIndex).mtimeMs >= Math.max(newestModification(join(webSource, "src")), statSync(join(webSource, "index.html")).mtimeMs)) return;
  const build = spawn("npm", ["run", "build:web"], { cwd: repositoryRoot, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  build.stdout.on("data", (chunk: Buffer) => { output += chunk.toString(); });
  build.stderr.on("data", (chunk: Buffer) => { output += chunk.toString(); });
  const code = await new Promise<number | null>((resolveExit, reject) => {
    build.once("error", reject);
    build.once("exit", resolveExit);
  });
  assert.equal(code, 0, `npm run build:web failed:\n${output}`);
  assert.ok(existsSync(webIndex), `npm run build:web wrote no ${webIndex}`);
}

/**
 * Registers cleanup that runs after the test: those marked `first` (the
 * browser, whose open streams would hold a stopping server up), then the
 * rest, the latest first. node:test itself runs `after` hooks in order.
 */
export type Defer = (cleanup: () => unknown, options?: { first: boolean }) => void;

export interface Prepared {
  defer: Defer;
  folder: string;
  port: number;
  databasePath: string;
  gateDirectory: string;
  invocations: InvocationLog;
}

/** A temporary folder with the store and the gates, a free port, and a cleanup stack run after the test. */
export async function prepare(t: TestContext): Promise<Prepared> {
  if (chromiumMissing) throw new Error(`the perdure dev browser tests cannot run in CI: ${missingChromiumMessage}`);
  const firstCleanups: (() => unknown)[] = [];
  const cleanups: (() => unknown)[] = [];
  t.after(async () => {
    for (const cleanup of [...firstCleanups, ...cleanups.reverse()]) {
      try {
        await cleanup();
      } catch (error) {
        console.error("cleanup failed:", error);
      }
    }
  });
  const defer: Defer = (cleanup, options) => (options?.first === true ? firstCleanups : cleanups).push(cleanup);
  await ensureWebUiBuilt();
  const folder = mkdtempSync(join(tmpdir(), "perdure-dev-browser-"));
  defer(() => rmSync(folder, { recursive: true, force: true }));
  const [port] = await findFreeLoopbackPorts(1);
  assert.ok(port !== undefined);
  const gateDirectory = join(folder, "gates");
  mkdirSync(gateDirectory);
  return { defer, folder, port, databasePath: join(folder, "dev.db"), gateDirectory, invocations: new InvocationLog(join(gateDirectory, "invocations.jsonl")) };
}

export async function startServer(prepared: Prepared): Promise<DevServerProcess> {
  const server = await DevServerProcess.start(prepared);
  prepared.defer(() => server.stop());
  return server;
}

/** Headless Chromium with a fresh profile, closed after the test before the server stops. */
export async function openBrowser({ defer, folder }: Prepared): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.launchPersistentContext(join(folder, "chromium-profile"), {
    executablePath: chromiumPath,
    headless: true,
    args: chromiumArgs,
    viewport,
    deviceScaleFactor: 1,
  });
  defer(() => context.close(), { first: true });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(uiTimeoutMs);
  return { context, page };
}

/**
 * Holds the page's reads of the session (`/inspect`) until the returned
 * release is called, so the page's snapshot lags behind the session; the
 * test context releases them at its end too.
 */
export async function holdSessionReads(t: TestContext, page: Page): Promise<() => Promise<void>> {
  let open = (): void => undefined;
  const held = new Promise<void>((resolve) => (open = resolve));
  await page.route(sessionReads, async (route) => {
    await held;
    await route.continue().catch(() => undefined);
  });
  t.after(() => open());
  return async () => {
    open();
    await page.unroute(sessionReads);
  };
}
const sessionReads = "**/api/sessions/*/inspect";

/** Opens the UI, starts a session from the sidebar and returns its ID (from the URL the UI moves to). */
export async function startSession(page: Page, url: string): Promise<string> {
  await page.goto(url);
  await page.getByRole("complementary", { name: "Sessions" }).getByRole("button", { name: "New session" }).click();
  await page.waitForURL(/\/sessions\/[^/]+$/);
  const sessionId = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1) ?? "");
  await page.getByRole("heading", { name: sessionId }).waitFor();
  return sessionId;
}

export async function send(page: Page, text: string): Promise<void> {
  const composer = page.getByTestId("composer-input");
  await composer.fill(text);
  await composer.press("Enter");
  await page.getByTestId("user-message").filter({ hasText: text }).waitFor();
}

export function assistantMessage(page: Page, turnId: string): Locator {
  return page.locator(`[data-testid="assistant-message"][data-message-id="${turnId}-assistant"]`);
}

export function toolCard(message: Locator, toolName: string): Locator {
  return message.locator(`[data-testid="tool-card"][data-tool-name="${toolName}"]`);
}

/** Waits until the tool card's head (its first button: name, effect, status) shows the status `label`. */
export async function waitForBadge(card: Locator, label: string): Promise<void> {
  await card.getByRole("button").first().getByText(label, { exact: true }).waitFor({ state: "visible" });
}

/** Waits until `text` shows inside `scope`; a timeout says what the page showed instead. */
export async function waitForText(scope: Locator, text: string): Promise<void> {
  try {
    await scope.getByText(text).first().waitFor({ state: "visible" });
  } catch (error) {
    const shown = await scope.page().evaluate(() => document.body.innerText).catch((failure: unknown) => `(unreadable: ${String(failure)})`);
    throw new Error(`${JSON.stringify(text)} did not show; the page showed, last 2,000 characters:\n${shown.slice(-2000)}`, { cause: error });
  }
}

/** How often `text` occurs in what the page shows (not counting the screen reader's live region, which repeats answers). */
export async function occurrencesOnPage(page: Page, text: string): Promise<number> {
  return page.evaluate((needle) => {
    const count = (element: HTMLElement | null): number => (element === null ? 0 : element.innerText.split(needle).length - 1);
    return count(document.body) - count(document.querySelector<HTMLElement>("[data-testid=live-announcer]"));
  }, text);
}

export interface StoredPart { type: string; text?: string; state?: string; toolName?: string; output?: unknown; errorText?: string }
export interface StoredChat { messages: { id: string; role: string; parts: StoredPart[] }[]; resumeToken: string | null }

export async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  assert.equal(response.status, 200, `GET ${url}: ${response.status} ${await response.clone().text()}`);
  return (await response.json()) as T;
}

/** The stored conversation once no turn is active. */
export async function settledChat(serverUrl: string, sessionId: string): Promise<StoredChat> {
  return pollUntil(async () => {
    const chat = await getJson<StoredChat>(`${serverUrl}/api/chat/${sessionId}`);
    return chat.resumeToken === null ? chat : undefined;
  }, { timeoutMs: uiTimeoutMs, intervalMs: 100, description: `session ${sessionId} to finish its turn` });
}

export function storedAssistant(chat: StoredChat, turnId: string): { id: string; parts: StoredPart[] } {
  const message = chat.messages.find((candidate) => candidate.id === `${turnId}-assistant`);
  assert.ok(message !== undefined, `no stored message ${turnId}-assistant in ${JSON.stringify(chat.messages.map((candidate) => candidate.id))}`);
  return message;
}

export function storedTexts(message: { parts: StoredPart[] }): string[] {
  return message.parts.flatMap((part) => (part.type === "text" && part.text !== undefined && part.text.trim() !== "" ? [part.text.trim()] : []));
}

export async function shownTexts(message: Locator): Promise<string[]> {
  return (await message.getByTestId("message-text").allInnerTexts()).map((text) => text.trim());
}

export async function saveScreenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotFolder, { recursive: true });
  // Let the hover and focus rings settle out of the picture.
  await page.mouse.move(0, viewport.height - 1);
  await page.screenshot({ path: join(screenshotFolder, name), animations: "disabled", caret: "hide" });
}
