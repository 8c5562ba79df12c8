/**
 * Browser test of `perdure dev` with MCP tools: the real CLI in a child
 * process on a temporary SQLite store, serving the entry `npm start` serves
 * (the example support agent on its scripted demo model), whose notes tools
 * come from the example notes MCP server, started over stdio by
 * `McpToolSource` for each request. Headless Debian Chromium through
 * playwright-core drives the chat: a read MCP tool runs without approval
 * and reports progress, a write MCP tool waits for approval, and the
 * session inspector shows both tool Steps and the calls' tool names.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { pollUntil } from "@perdure/agents/testing";
import type { Page } from "playwright-core";
import { demoEntryPath, DevServerProcess } from "./test-fixtures/dev-server-process.ts";
import {
  assistantMessage,
  getJson,
  openBrowser,
  prepare,
  saveScreenshot,
  send,
  settledChat,
  shownTexts,
  startSession,
  storedAssistant,
  storedTexts,
  testOptions,
  toolCard,
  uiTimeoutMs,
  waitForBadge,
  waitForText,
} from "./test-fixtures/dev-browser.ts";

interface Inspection {
  timeline: { executionId: string; stepType: string; status: string; attempts: { method: string; status: string }[] }[];
  activeExecutions: { executionId: string; stepType: string }[];
  snapshot: { tool_calls: { tool_name: string; status: string; effect: string; requires_approval: boolean }[]; messages: { role: string; tool_name?: string; text: string }[] };
}

const listAnswer = "The notes server has 2 notes: returns (Returns are free within 30 days of delivery; refunds go back to the original payment method.); shipping (Orders leave the warehouse within two working days; the tracking link is in the confirmation email.).";

async function inspect(serverUrl: string, sessionId: string): Promise<Inspection> {
  return getJson<Inspection>(`${serverUrl}/api/sessions/${encodeURIComponent(sessionId)}/inspect`);
}

/** The Step type of each row the inspector's timeline shows, in order. */
async function shownTimelineRows(page: Page): Promise<string[]> {
  return page.getByTestId("step-timeline").locator("[data-step-type]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-step-type") ?? "?"));
}

/** Waits until the inspector's timeline shows every Step execution the API reports. */
async function waitForTimeline(page: Page, serverUrl: string, sessionId: string): Promise<Inspection> {
  let last: { shown: string[]; expected: string[] } = { shown: [], expected: [] };
  try {
    return await pollUntil(async () => {
      const inspection = await inspect(serverUrl, sessionId);
      const ids = new Set(inspection.timeline.map((execution) => execution.executionId));
      const expected = [...inspection.timeline, ...inspection.activeExecutions.filter((active) => !ids.has(active.executionId))].map((execution) => execution.stepType);
      last = { shown: await shownTimelineRows(page), expected };
      return JSON.stringify(last.shown) === JSON.stringify(expected) ? inspection : undefined;
    }, { timeoutMs: uiTimeoutMs, intervalMs: 200, description: "the inspector's timeline to show the API's Step executions" });
  } catch (error) {
    throw new Error(`the timeline shows ${JSON.stringify(last.shown)}, the API reports ${JSON.stringify(last.expected)}`, { cause: error });
  }
}

void test("perdure dev in Chromium: the demo agent calls the example notes MCP server over stdio; the chat shows the MCP tools and their results, and the inspector their tool Steps", testOptions, async (t) => {
  const prepared = await prepare(t);
  const notesFile = join(prepared.folder, "notes.json");
  const server = await DevServerProcess.start({ ...prepared, entry: demoEntryPath, env: { PERDURE_NOTES_FILE: notesFile } });
  prepared.defer(() => server.stop());
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);
  assert.match(server.log, /perdure dev: SupportAgent uses the scripted demo model/);

  // A read MCP tool: offered as notes__list_notes, run in CallTool without approval.
  await send(page, "what do our notes say?");
  const turn1 = assistantMessage(page, "turn-1");
  const list = toolCard(turn1, "notes__list_notes");
  await waitForText(turn1, listAnswer);
  await waitForBadge(list, "done");
  await list.getByRole("button", { expanded: false }).click();
  await waitForText(list, "Returns are free within 30 days of delivery");
  assert.deepEqual(await shownTexts(turn1), ["Let me check the shop's notes.", listAnswer]);

  // A write MCP tool: add_note has no read-only or idempotent hint, so it waits for approval.
  await page.getByRole("group", { name: "Layout" }).getByRole("button", { name: "Split" }).click();
  await send(page, "add a note gift-wrap: wrap order 1001 in gift paper");
  const turn2 = assistantMessage(page, "turn-2");
  const add = toolCard(turn2, "notes__add_note");
  await waitForBadge(add, "needs approval");
  await waitForText(turn2, "I will add the note gift-wrap once you approve it.");
  // The inspector lists the pending call's record with its MCP tool name, effect and status.
  await page.getByRole("tab", { name: "Timeline" }).click();
  const pendingRow = page.getByTestId("tool-calls-panel").locator("tr").filter({ hasText: "notes__add_note" });
  await waitForText(pendingRow, "awaiting approval");
  await waitForText(pendingRow, "unclassified");
  await waitForText(pendingRow, "needs approval");
  assert.deepEqual((await inspect(server.url, sessionId)).snapshot.tool_calls.map((call) => [call.tool_name, call.status, call.effect, call.requires_approval]), [["notes__add_note", "awaiting_approval", "unclassified", true]]);
  assert.throws(() => readFileSync(notesFile), { code: "ENOENT" }, "the note was written before it was approved");
  await saveScreenshot(page, "dev-mcp-approval.png");
  await add.getByRole("button", { name: "Approve" }).click();
  await waitForText(turn2, "Saved on the notes server: added note gift-wrap.");
  await waitForBadge(add, "done");

  const chat = await settledChat(server.url, sessionId);
  assert.deepEqual(storedTexts(storedAssistant(chat, "turn-1")), ["Let me check the shop's notes.", listAnswer]);
  assert.deepEqual(storedTexts(storedAssistant(chat, "turn-2")), ["I will add the note gift-wrap once you approve it.", "Saved on the notes server: added note gift-wrap."]);
  const storedCalls = chat.messages.flatMap((message) => message.parts).filter((part) => part.type === "dynamic-tool").map((part) => [part.toolName, part.state]);
  assert.deepEqual(storedCalls, [["notes__list_notes", "output-available"], ["notes__add_note", "output-available"]]);
  const notes = JSON.parse(readFileSync(notesFile, "utf8")) as { notes: { title: string; text: string; addedByKey: string | null }[] };
  assert.deepEqual(notes.notes.map((note) => note.title), ["returns", "shipping", "gift-wrap"]);
  assert.match(notes.notes.at(-1)?.addedByKey ?? "", new RegExp(`^${sessionId}/turn-2/`), "the note was not added with the session's idempotency key");

  // The inspector: the read's CallTool and the write's approval and CallSingleAttemptTool, each completed once.
  await page.getByRole("group", { name: "Layout" }).getByRole("button", { name: "Inspector" }).click();
  await page.getByRole("tab", { name: "Timeline" }).click();
  await page.getByTestId("step-timeline").waitFor();
  const inspection = await waitForTimeline(page, server.url, sessionId);
  const executions = (stepType: string) => inspection.timeline.filter((execution) => execution.stepType === stepType);
  for (const stepType of ["CallTool", "AwaitToolApproval", "CallSingleAttemptTool"]) {
    assert.deepEqual(executions(stepType).map((execution) => execution.status), ["completed"], `${stepType} did not complete once`);
  }
  const timeline = page.getByTestId("step-timeline");
  for (const stepType of ["CallTool", "CallSingleAttemptTool"]) {
    const row = timeline.locator(`[data-step-type="${stepType}"]`);
    await waitForText(row, stepType);
    await row.click();
    const attempts = timeline.locator("table.attempts").last();
    await waitForText(attempts.locator("tr.attempt-completed"), "execute");
    await row.click();
  }
  // The tool Steps' calls by name: the stored tool results of the conversation, newest last.
  const history = page.getByTestId("tool-calls-panel").locator("details.tool-history");
  await history.locator("summary").click();
  await waitForText(history, "notes__list_notes");
  await waitForText(history, "notes__add_note");
  await waitForText(history, "added note gift-wrap");
  assert.deepEqual(inspection.snapshot.messages.filter((message) => message.role === "tool").map((message) => message.tool_name), ["notes__list_notes", "notes__add_note"]);

  // The Events tab shows the MCP server's progress notifications of the read, as mcp.tool_progress events.
  await page.getByRole("tab", { name: "Events" }).click();
  const progressEvents = page.getByTestId("event-log").locator('[data-event-type="mcp.tool_progress"]');
  await pollUntil(async () => (await progressEvents.count()) === 2, { timeoutMs: uiTimeoutMs, description: "the Events tab to show the read's two mcp.tool_progress events" });
  assert.deepEqual(await progressEvents.locator(".event-summary").allInnerTexts(), ["notes__list_notes · 1 of 2 · read returns", "notes__list_notes · 2 of 2 · read shipping"]);
  await saveScreenshot(page, "dev-mcp-inspector.png");
});
