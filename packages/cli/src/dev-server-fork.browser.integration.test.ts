/**
 * Browser test of edit and retry in `perdure dev`'s web UI: editing a user
 * message forks the session before its turn and sends the edited text in a
 * new branch; the inspector shows the fork's lineage and opens the source,
 * which is unchanged; retry on an answer forks before its turn and sends the
 * turn's message again. The real CLI in a child process, headless Chromium,
 * and the troubled agent's scripted model ("ok: <text>").
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { DevServerProcess } from "./test-fixtures/dev-server-process.ts";
import { assistantMessage, openBrowser, prepare, send, startSession, testOptions, waitForText } from "./test-fixtures/dev-browser.ts";

const troubledEntryPath = fileURLToPath(new URL("./test-fixtures/troubled-agent.ts", import.meta.url));

function openSessionId(page: Page): string {
  return decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1) ?? "");
}

async function userTexts(page: Page): Promise<string[]> {
  return page.getByTestId("user-message").locator(".bubble").allInnerTexts();
}

void test("perdure dev in Chromium: edit a message, see the new branch with its lineage, open the source unchanged; retry an answer in another branch", testOptions, async (t) => {
  const prepared = await prepare(t);
  const server = await DevServerProcess.start({ ...prepared, entry: troubledEntryPath });
  prepared.defer(() => server.stop());
  const { page } = await openBrowser(prepared);

  const source = await startSession(page, server.url);
  await send(page, "first message");
  await waitForText(assistantMessage(page, "turn-1"), "ok: first message");
  await send(page, "second message");
  await waitForText(assistantMessage(page, "turn-2"), "ok: second message");

  // Edit the second message: a new session, forked after turn 1, answers the edited text.
  const second = page.getByTestId("user-message").filter({ hasText: "second message" });
  await second.hover();
  await second.getByTestId("edit-message").click();
  await page.getByTestId("edit-message-text").fill("second message, edited");
  await page.getByTestId("send-edited-message").click();
  await page.waitForURL((url) => !url.pathname.endsWith(`/${encodeURIComponent(source)}`));
  const edited = openSessionId(page);
  await page.getByRole("heading", { name: edited }).waitFor();
  await waitForText(assistantMessage(page, "turn-2"), "ok: second message, edited");
  assert.deepEqual(await userTexts(page), ["first message", "second message, edited"]);
  const lineage = page.getByTestId("lineage-panel");
  await waitForText(lineage, "after turn 1");
  assert.equal(await lineage.getByTestId("lineage-source").innerText(), source);
  await waitForText(page.getByRole("complementary", { name: "Sessions" }).locator(".session-item").filter({ hasText: edited }), edited);

  // The source opens from the lineage, as it was.
  await lineage.getByTestId("lineage-source").click();
  await page.waitForURL((url) => url.pathname.endsWith(`/${encodeURIComponent(source)}`));
  await page.getByRole("heading", { name: source }).waitFor();
  await waitForText(assistantMessage(page, "turn-2"), "ok: second message");
  assert.deepEqual(await userTexts(page), ["first message", "second message"]);
  // The source is no fork, and its lineage lists the edited branch.
  const sourceLineage = page.getByTestId("lineage-panel");
  await waitForText(sourceLineage.getByTestId("lineage-forks"), edited);
  assert.equal(await sourceLineage.getByTestId("lineage-source").count(), 0, "the source is no fork");
  assert.match(await sourceLineage.getByTestId("lineage-forks").innerText(), /continues after turn 1/);

  // Retry turn 1: another branch, forked before it, sends its message again.
  const firstAnswer = assistantMessage(page, "turn-1");
  await firstAnswer.hover();
  await firstAnswer.getByTestId("retry-turn").click();
  await page.waitForURL((url) => !url.pathname.endsWith(`/${encodeURIComponent(source)}`) && !url.pathname.endsWith(`/${encodeURIComponent(edited)}`));
  const retried = openSessionId(page);
  await page.getByRole("heading", { name: retried }).waitFor();
  await waitForText(assistantMessage(page, "turn-1"), "ok: first message");
  assert.deepEqual(await userTexts(page), ["first message"]);
  await waitForText(page.getByTestId("lineage-panel"), "before its first turn");

  // Back at the source, both branches are listed, and each opens.
  await page.getByTestId("lineage-panel").getByTestId("lineage-source").click();
  await page.getByRole("heading", { name: source }).waitFor();
  const forks = page.getByTestId("lineage-panel").getByTestId("lineage-forks");
  await waitForText(forks, retried);
  assert.deepEqual((await forks.getByTestId("lineage-fork").allInnerTexts()).sort(), [edited, retried].sort());
  await forks.getByTestId("lineage-fork").filter({ hasText: edited }).click();
  await page.getByRole("heading", { name: edited }).waitFor();
  await waitForText(assistantMessage(page, "turn-2"), "ok: second message, edited");
});
