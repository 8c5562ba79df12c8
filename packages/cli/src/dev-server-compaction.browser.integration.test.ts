/**
 * `perdure dev` in Chromium on an agent with two models, compaction and a
 * small message window: the session header's model picker switches the
 * model of the next turn through session settings, and the inspector's
 * "State & usage" tab shows the context summary, the window, the archived
 * chunks and where deleted history ends, as the store holds them.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { pollUntil } from "@perdure/agents/testing";
import { assistantMessage, getJson, holdSessionReads, openBrowser, prepare, saveScreenshot, send, startSession, testOptions, uiTimeoutMs, waitForText } from "./test-fixtures/dev-browser.ts";
import { DevServerProcess } from "./test-fixtures/dev-server-process.ts";

const pickerEntry = fileURLToPath(new URL("./test-fixtures/compacting-picker-agent.ts", import.meta.url));

interface Inspection {
  snapshot: {
    session_settings: Record<string, unknown>;
    context_summary: { summary: string; generation: number; last_sequence: number } | null;
    state: { turn_count: number; message_count: number; active_turn_id: string | null } | null;
  };
  messageStorage: {
    hasIndex: boolean;
    windowFirstSequence: number;
    windowMessageCount: number;
    chunks: { firstSequence: number; lastSequence: number; messageCount: number }[];
    deletedBeforeSequence: number | null;
  };
}

void test("perdure dev in Chromium: the model picker picks the next turn's model, and the inspector shows the context summary, the message window, the archived chunks and the deleted history", testOptions, async (t) => {
  const prepared = await prepare(t);
  const server = await DevServerProcess.start({ ...prepared, entry: pickerEntry });
  prepared.defer(() => server.stop());
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);
  const inspect = () => getJson<Inspection>(`${server.url}/api/sessions/${encodeURIComponent(sessionId)}/inspect`);
  const turnEnded = (turns: number) => pollUntil(async () => {
    const inspection = await inspect();
    const state = inspection.snapshot.state;
    return state !== null && state.turn_count >= turns && state.active_turn_id === null ? inspection : undefined;
  }, { timeoutMs: uiTimeoutMs, intervalMs: 100, description: `turn ${turns} of ${sessionId} to end` });

  // The picker offers the agent's models, the default first, and starts on the default.
  const picker = page.getByTestId("model-picker");
  // The page fills the picker once it has loaded the agent's features.
  await picker.locator("option").nth(1).waitFor({ state: "attached", timeout: uiTimeoutMs });
  assert.deepEqual(await picker.locator("option").allInnerTexts(), ["demo-small", "demo-large"]);
  assert.equal(await picker.inputValue(), "demo-small");

  // Picking demo-large stores it as the session's settings; the next turn answers with it. The pick shows
  // from the moment it is made, also while the page's read of the session's settings lags behind.
  const releaseReads = await holdSessionReads(t, page);
  const saved = page.waitForResponse((response) => response.url().endsWith("/settings") && response.request().method() === "POST");
  await picker.selectOption("demo-large");
  assert.equal((await saved).status(), 200);
  assert.equal(await picker.inputValue(), "demo-large", "the picker went back to the old model while the session's settings were read");
  await releaseReads();
  await pollUntil(async () => ((await inspect()).snapshot.session_settings.model === "demo-large" ? true : undefined), { timeoutMs: uiTimeoutMs, description: "the picked model in the session settings" });
  await send(page, "where is my parcel?");
  await waitForText(assistantMessage(page, "turn-1"), "demo-large answers:");
  await turnEnded(1);
  assert.equal(await picker.inputValue(), "demo-large");

  // Back to demo-small: the turn after the change uses it.
  await picker.selectOption("demo-small");
  await pollUntil(async () => ((await inspect()).snapshot.session_settings.model === "demo-small" ? true : undefined), { timeoutMs: uiTimeoutMs, description: "demo-small in the session settings" });
  await send(page, "and the refund?");
  await waitForText(assistantMessage(page, "turn-2"), "demo-small answers:");
  await turnEnded(2);

  // More turns until the session has compacted and retention has deleted a chunk.
  let inspection = await inspect();
  let turns = 2;
  while ((inspection.snapshot.context_summary === null || inspection.messageStorage.deletedBeforeSequence === null) && turns < 14) {
    turns += 1;
    await send(page, `question ${turns}: is the parcel still on its way?`);
    inspection = await turnEnded(turns);
  }
  const summary = inspection.snapshot.context_summary;
  const storage = inspection.messageStorage;
  assert.ok(summary !== null, `the session compacted within ${turns} turns`);
  assert.match(summary.summary, /^demo-small summary of \d+ items$/, "the summary came from the session's picked model");
  assert.ok(storage.deletedBeforeSequence !== null && storage.deletedBeforeSequence > 1, `retention deleted the oldest chunks within ${turns} turns`);
  // The snapshot is the contract's wire form, which leaves deleted history to list_agent_messages pages; the inspector's own storage view says it.
  assert.ok(!("deleted_before_sequence" in inspection.snapshot), "the snapshot's wire form adds no deleted_before_sequence");
  assert.ok(storage.chunks.length > 0, "older messages sit in archived chunks");
  assert.ok(storage.windowMessageCount <= 8, `the window keeps at most 8 messages (${storage.windowMessageCount})`);

  // The inspector shows what the API returned.
  await page.getByRole("group", { name: "Layout" }).getByRole("button", { name: "Inspector" }).click();
  await page.getByRole("tab", { name: "State & usage" }).click();
  const summaryPanel = page.getByTestId("context-summary-panel");
  await summaryPanel.waitFor();
  assert.equal((await summaryPanel.getByTestId("context-summary-text").innerText()).trim(), summary.summary);
  await waitForText(summaryPanel, `generation ${summary.generation}`);
  await waitForText(summaryPanel, `messages through #${summary.last_sequence}`);
  const storagePanel = page.getByTestId("message-storage-panel");
  await waitForText(storagePanel, `${storage.windowMessageCount} messages from ${storage.windowFirstSequence}`);
  await waitForText(storagePanel, `messages before ${storage.deletedBeforeSequence}`);
  const archived = storage.chunks.reduce((sum, chunk) => sum + chunk.messageCount, 0);
  await waitForText(storagePanel, `${archived} messages in ${storage.chunks.length}`);
  const newest = storage.chunks.at(-1);
  assert.ok(newest !== undefined);
  const chunkItems = await storagePanel.getByTestId("message-chunks").locator("li").allInnerTexts();
  assert.equal(chunkItems.length, storage.chunks.length, "every kept chunk is listed");
  assert.match(chunkItems[0] ?? "", new RegExp(`^#${newest.firstSequence}–${newest.lastSequence} · ${newest.messageCount} messages`), "the newest chunk comes first");
  await page.getByRole("group", { name: "Layout" }).getByRole("button", { name: "Split" }).click();
  await page.getByTestId("context-summary-panel").scrollIntoViewIfNeeded();
  await saveScreenshot(page, "dev-compaction-inspector.png");
});
