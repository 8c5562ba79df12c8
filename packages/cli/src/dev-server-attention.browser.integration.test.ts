/**
 * Browser test of what `perdure dev`'s web UI keeps in view across a
 * reload: a session waiting for an approval reads "needs approval" in the
 * sidebar even when another session is open (from `/api/sessions`, not from
 * the open session's snapshot), and a turn whose model kept failing still
 * shows its error after the page is loaded again. The real CLI in a child
 * process, headless Chromium, and the troubled agent's scripted model.
 */
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { DevServerProcess } from "./test-fixtures/dev-server-process.ts";
import { openBrowser, prepare, send, startSession, testOptions, waitForText } from "./test-fixtures/dev-browser.ts";

const troubledEntryPath = fileURLToPath(new URL("./test-fixtures/troubled-agent.ts", import.meta.url));

void test("perdure dev in Chromium: the sidebar says needs approval for a session that is not open, and a failed turn is still shown after a reload", testOptions, async (t) => {
  const prepared = await prepare(t);
  const server = await DevServerProcess.start({ ...prepared, entry: troubledEntryPath });
  prepared.defer(() => server.stop());
  const { page } = await openBrowser(prepared);

  const approving = await startSession(page, server.url);
  await send(page, "send the invoice");
  await page.getByTestId("assistant-message").getByText("I will send it once you approve.").waitFor();

  const sidebar = page.getByRole("complementary", { name: "Sessions" });
  await sidebar.getByRole("button", { name: "New session" }).click();
  await page.waitForURL((url) => url.pathname.startsWith("/sessions/") && !url.pathname.endsWith(`/${encodeURIComponent(approving)}`));
  const failing = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1) ?? "");
  await page.getByRole("heading", { name: failing }).waitFor();
  await send(page, "break the model");
  await waitForText(page.locator(".turn-error"), "Error: the model provider is down (test)");

  // A fresh page knows only what the server says: the open session is the failed one.
  await page.reload();
  await page.getByRole("heading", { name: failing }).waitFor();
  await waitForText(page.locator(".turn-error"), "The turn failed. Error: the model provider is down (test)");
  await waitForText(sidebar.locator(".session-item").filter({ hasText: approving }), "needs approval");
});
