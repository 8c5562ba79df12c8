/**
 * Browser tests of `perdure dev`: the real CLI in a child process of its own
 * process group, on a temporary SQLite store, driven through headless Debian
 * Chromium with playwright-core. The agent is the gated support agent of
 * test-fixtures/gated-support-agent.ts, whose answers and tools pause at
 * FileGates so the page can be reloaded mid-answer and the server killed
 * during a tool call; where a test needs a connection to drop or wait at a
 * given moment, it holds or resets the page's request in the browser. Screenshots of the chat and the inspector are written
 * to docs/images/ for the README.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { FileGate, pollUntil } from "@perdure/agents/testing";
import type { Page } from "playwright-core";
import {
  assistantMessage,
  getJson,
  occurrencesOnPage,
  openBrowser,
  outcomeUnknownText,
  prepare,
  saveScreenshot,
  send,
  settledChat,
  shownTexts,
  startServer,
  startSession,
  storedAssistant,
  storedTexts,
  testOptions,
  toolCard,
  uiTimeoutMs,
  waitForBadge,
  waitForText,
} from "./test-fixtures/dev-browser.ts";

interface Inspection { timeline: { executionId: string; stepType: string; attempts: { method: string; status: string; error: string | null }[] }[]; activeExecutions: { executionId: string; stepType: string }[] }

/** The Step type of each row the inspector's timeline shows, in order. */
async function shownTimelineRows(page: Page): Promise<string[]> {
  return page.getByTestId("step-timeline").locator("[data-step-type]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-step-type") ?? "?"));
}

/** Opens the inspector layout on its Timeline tab and waits until it shows every Step execution the API reports. */
async function openInspectorTimeline(page: Page, serverUrl: string, sessionId: string): Promise<Inspection> {
  await page.getByRole("group", { name: "Layout" }).getByRole("button", { name: "Inspector" }).click();
  await page.getByRole("tab", { name: "Timeline" }).click();
  await page.getByTestId("step-timeline").waitFor();
  let last: { shown: string[]; expected: string[] } = { shown: [], expected: [] };
  try {
    return await pollUntil(async () => {
      const inspection = await getJson<Inspection>(`${serverUrl}/api/sessions/${sessionId}/inspect`);
      const ids = new Set(inspection.timeline.map((execution) => execution.executionId));
      const expected = [...inspection.timeline, ...inspection.activeExecutions.filter((active) => !ids.has(active.executionId))].map((execution) => execution.stepType);
      last = { shown: await shownTimelineRows(page), expected };
      return JSON.stringify(last.shown) === JSON.stringify(expected) ? inspection : undefined;
    }, { timeoutMs: uiTimeoutMs, intervalMs: 200, description: "the inspector's timeline to show the API's Step executions" });
  } catch (error) {
    throw new Error(`the timeline shows ${JSON.stringify(last.shown)}, the API reports ${JSON.stringify(last.expected)}`, { cause: error });
  }
}

/** Asserts that the timeline axis's labels do not overlap and that each label's text fits its slot. */
async function assertAxisLabelsApart(page: Page): Promise<void> {
  const labels = await page.getByTestId("step-timeline").getByTestId("axis-label").evaluateAll((elements) => elements.map((element) => {
    const box = element.getBoundingClientRect();
    return { text: element.textContent ?? "", left: box.left, right: box.right, fits: element.scrollWidth <= element.clientWidth };
  }));
  for (const label of labels) assert.ok(label.fits, `the axis label "${label.text}" is wider than its slot`);
  const sorted = labels.toSorted((first, second) => first.left - second.left);
  for (const [index, label] of sorted.entries()) {
    const next = sorted[index + 1];
    if (next !== undefined) assert.ok(label.right <= next.left, `the axis labels "${label.text}" and "${next.text}" overlap`);
  }
}

void test("perdure dev in Chromium: a streamed answer, an approved refund, a reload mid-answer that resumes without repeating text, and the turn's Steps in the inspector", testOptions, async (t) => {
  const prepared = await prepare(t);
  const { gateDirectory, invocations } = prepared;
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);
  await page.getByRole("heading", { name: "Start the conversation" }).waitFor();

  // A read tool and the answer streamed after it.
  await send(page, "where is order 1001?");
  const turn1 = assistantMessage(page, "turn-1");
  await waitForText(turn1, "Order 1001 (Trail running shoes, 129.00 USD) is shipped.");
  const lookup = toolCard(turn1, "lookup_order");
  await waitForBadge(lookup, "done");
  await lookup.getByRole("button", { expanded: false }).click();
  await waitForText(lookup, "Trail running shoes");
  await lookup.getByRole("button", { expanded: true }).click();
  assert.deepEqual(await shownTexts(turn1), [
    "Let me look up order 1001.",
    "Order 1001 (Trail running shoes, 129.00 USD) is shipped. It is on its way and should arrive within three working days; the tracking link is in your confirmation email.",
  ]);

  // A write that waits for approval: the card asks, the session list says so, Approve runs it.
  const beforeTurn2 = Date.now();
  await send(page, "please refund order 1002");
  const turn2 = assistantMessage(page, "turn-2");
  const refund = toolCard(turn2, "refund_order");
  await waitForBadge(refund, "needs approval");
  await waitForText(turn2, "I can refund order 1002 once you approve it.");
  await waitForText(page.getByRole("complementary", { name: "Sessions" }).getByRole("button", { name: sessionId }), "needs approval");
  assert.equal(invocations.count("refund_order:start"), 0, "the refund ran before it was approved");
  await saveScreenshot(page, "dev-chat.png");
  await refund.getByRole("button", { name: "Approve" }).click();
  await waitForText(turn2, "Refund result: refunded 84.50 USD for order 1002 (Rain jacket)");
  await waitForBadge(refund, "done");
  await waitForText(refund, "refunded 84.50 USD for order 1002 (Rain jacket)");
  assert.equal(invocations.count("refund_order:done"), 1);

  // Reload while the answer streams: the model stops after its first sentence until the gate opens.
  const answerGate = new FileGate(gateDirectory, "answer-2001");
  const firstSentence = "Order 2001 (Camping stove, 45.00 USD) is delivered.";
  const rest = "It was delivered; ask for a refund within 30 days";
  const beforeTurn3 = Date.now();
  await send(page, "where is order 2001?");
  await answerGate.waitUntilReached({ timeoutMs: uiTimeoutMs });
  const turn3 = assistantMessage(page, "turn-3");
  await waitForText(turn3, firstSentence);
  assert.equal(await turn3.getByText(rest).count(), 0, "the answer went past the gate");
  const reloadedAt = Date.now();
  await page.reload();
  await waitForText(turn3, firstSentence);
  assert.equal(await page.getByTestId("assistant-message").count(), 3, "the reload lost or repeated a turn");
  assert.equal(await occurrencesOnPage(page, firstSentence), 1, "the reload repeated the streamed text");
  answerGate.open();
  await waitForText(turn3, rest);
  const chat = await settledChat(server.url, sessionId);
  const stored = storedTexts(storedAssistant(chat, "turn-3"));
  assert.deepEqual(stored, ["Let me look up order 2001.", `${firstSentence} ${rest} if anything is wrong with it.`]);
  // What the chat shows once the turn is over is the stored message, each sentence once.
  try {
    await pollUntil(async () => JSON.stringify(await shownTexts(turn3)) === JSON.stringify(stored), { timeoutMs: uiTimeoutMs, description: "the chat to show the stored answer" });
  } catch (error) {
    assert.fail(`the chat shows ${JSON.stringify(await shownTexts(turn3))}, the store has ${JSON.stringify(stored)} (${String(error)})`);
  }
  assert.equal(await turn3.count(), 1);
  for (const sentence of [...stored, firstSentence, rest]) assert.equal(await occurrencesOnPage(page, sentence), 1, `"${sentence}" shows more than once`);
  assert.deepEqual(chat.messages.map((message) => (message.role === "user" ? "user" : message.id)), ["user", "turn-1-assistant", "user", "turn-2-assistant", "user", "turn-3-assistant"]);
  // A user message keeps the ID the page's Chat gave it, so the page can key its state by it after a reload.
  for (const message of chat.messages.filter((each) => each.role === "user")) assert.doesNotMatch(message.id, /^message-\d+$/);

  // The inspector shows every Step execution of the three turns.
  const inspection = await openInspectorTimeline(page, server.url, sessionId);
  const stepTypes = inspection.timeline.map((execution) => execution.stepType);
  assert.equal(stepTypes.filter((type) => type === "RunModel").length, 6, "two model calls per turn");
  assert.equal(stepTypes.filter((type) => type === "CallTool").length, 2, "the two lookups");
  assert.equal(stepTypes.filter((type) => type === "CallSingleAttemptTool").length, 1, "the refund");
  assert.equal(stepTypes.filter((type) => type === "AwaitToolApproval").length, 1, "the refund's approval");
  assert.equal(stepTypes.filter((type) => type === "ResumeTurn").length, 3, "one per turn after its tools");
  const timeline = page.getByTestId("step-timeline");
  for (const stepType of ["StartAgentSession", "AwaitUserMessage", "RunModel", "CallTool", "AwaitToolApproval", "CallSingleAttemptTool", "ResumeTurn"]) {
    assert.ok(await timeline.locator(`[data-step-type="${stepType}"]`).getByText(stepType, { exact: true }).first().isVisible(), `the timeline shows no ${stepType}`);
  }
  for (const turn of ["turn 1", "turn 2", "turn 3"]) await timeline.getByText(turn, { exact: true }).waitFor();
  await assertAxisLabelsApart(page);

  // The Events tab shows when each event was written: the reload replayed every event of the three turns at once.
  await page.getByRole("tab", { name: "Events" }).click();
  const turnStarts = page.getByTestId("event-log").locator('[data-event-type="turn_started"] time');
  await pollUntil(async () => (await turnStarts.count()) === 3, { timeoutMs: uiTimeoutMs, description: "the Events tab to show the three turn_started events" });
  const started = (await turnStarts.evaluateAll((times) => times.map((time) => time.getAttribute("datetime") ?? ""))).map((iso) => Date.parse(iso));
  assert.ok(started[0] !== undefined && started[0] < beforeTurn2, `turn 1 shows ${new Date(started[0] ?? NaN).toISOString()}, after turn 2 was sent at ${new Date(beforeTurn2).toISOString()}`);
  assert.ok(started[1] !== undefined && started[1] >= beforeTurn2 && started[1] < beforeTurn3, "turn 2's start is not shown between the sends of turns 2 and 3");
  assert.ok(started[2] !== undefined && started[2] >= beforeTurn3 && started[2] < reloadedAt, "turn 3's start is not shown between its send and the reload");
  assert.match(server.log, /perdure dev: SupportAgent on SQLite at /);
});

void test("perdure dev in Chromium: killed during a tool call and started again on the same store, the session goes on and the UI shows the retried read and the write's unknown outcome", testOptions, async (t) => {
  const prepared = await prepare(t);
  const { port, gateDirectory, invocations } = prepared;
  let server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);
  const restart = async (): Promise<void> => {
    await server.kill();
    await page.getByText("server unreachable").waitFor();
    server = await startServer(prepared);
    assert.equal(server.url, `http://127.0.0.1:${port}`);
  };

  // A read killed mid-call: the restarted Worker retries it.
  const lookupGate = new FileGate(gateDirectory, "lookup_order-2002");
  await send(page, "where is order 2002?");
  await lookupGate.waitUntilReached({ timeoutMs: uiTimeoutMs });
  const turn1 = assistantMessage(page, "turn-1");
  const lookup = toolCard(turn1, "lookup_order");
  await waitForBadge(lookup, "running");
  await restart();
  await lookupGate.waitUntilReached({ count: 2, timeoutMs: uiTimeoutMs });
  lookupGate.open();
  const lookupAnswer = "Order 2002 (Sleeping bag, 99.00 USD) is processing. It has not left the warehouse yet, so it can still be changed.";
  await waitForText(turn1, lookupAnswer);
  await waitForBadge(lookup, "done");
  await page.getByText("server connected").waitFor();
  let chat = await settledChat(server.url, sessionId);
  const storedLookup = storedAssistant(chat, "turn-1");
  assert.deepEqual(storedTexts(storedLookup), ["Let me look up order 2002.", lookupAnswer]);
  assert.deepEqual(await shownTexts(turn1), storedTexts(storedLookup));
  const lookupPart = storedLookup.parts.find((part) => part.type === "dynamic-tool");
  assert.equal(lookupPart?.state, "output-available");
  assert.match(JSON.stringify(lookupPart?.output), /Sleeping bag/);
  assert.deepEqual(invocations.entries().filter((entry) => entry.name.startsWith("lookup_order")).map((entry) => [entry.name, (entry.details as { attempt: number }).attempt]), [
    ["lookup_order:start", 1],
    ["lookup_order:start", 2],
    ["lookup_order:done", 2],
  ]);

  // An approved single-attempt write killed mid-call: never run again, its outcome is unknown.
  const refundGate = new FileGate(gateDirectory, "refund_order-2003");
  await send(page, "please refund order 2003");
  const turn2 = assistantMessage(page, "turn-2");
  const refund = toolCard(turn2, "refund_order");
  await refund.getByRole("button", { name: "Approve" }).click();
  await refundGate.waitUntilReached({ timeoutMs: uiTimeoutMs });
  await waitForBadge(refund, "approved · running");
  await restart();
  refundGate.open();
  await waitForText(turn2, "Refund result: The tool call was interrupted and its outcome is unknown");
  await waitForBadge(refund, "failed");
  await waitForText(refund, "its outcome is unknown");
  chat = await settledChat(server.url, sessionId);
  const storedRefund = storedAssistant(chat, "turn-2");
  assert.deepEqual(storedTexts(storedRefund), ["I can refund order 2003 once you approve it.", `Refund result: ${outcomeUnknownText}`]);
  assert.deepEqual(await shownTexts(turn2), storedTexts(storedRefund));
  const refundPart = storedRefund.parts.find((part) => part.type === "dynamic-tool");
  // Once the turn is over, the stored result is the text the model saw, and the unknown outcome stays an error (agent-ui-messages.ts).
  assert.deepEqual([refundPart?.toolName, refundPart?.state, refundPart?.errorText], ["refund_order", "output-error", outcomeUnknownText]);
  assert.equal(invocations.count("refund_order:start"), 1, "the single-attempt write ran again after the restart");
  assert.equal(invocations.count("refund_order:done"), 0);
  // After a reload the chat is rebuilt from the store: the card still says the outcome is unknown.
  await page.reload();
  await waitForText(turn2, `Refund result: ${outcomeUnknownText}`);
  const folded = refund.getByRole("button", { expanded: false });
  if ((await folded.count()) > 0) await folded.click();
  await waitForText(refund, "its outcome is unknown");
  await waitForBadge(refund, "failed");

  // The inspector: the lookup's lost attempt and its retry, the write's lost attempt recorded as outcome unknown.
  const inspection = await openInspectorTimeline(page, server.url, sessionId);
  const callTool = inspection.timeline.find((execution) => execution.stepType === "CallTool");
  assert.deepEqual(callTool?.attempts.filter((attempt) => attempt.method === "execute").map((attempt) => attempt.status), ["failed", "completed"]);
  assert.match(callTool?.attempts.find((attempt) => attempt.status === "failed")?.error ?? "", /WorkerLost/);
  const singleAttempt = inspection.timeline.find((execution) => execution.stepType === "CallSingleAttemptTool");
  assert.deepEqual(singleAttempt?.attempts.filter((attempt) => attempt.method === "execute").map((attempt) => attempt.status), ["failed"]);
  assert.ok(inspection.timeline.some((execution) => execution.stepType === "RecordToolOutcomeUnknown"));
  const timeline = page.getByTestId("step-timeline");
  await waitForText(timeline.locator('[data-step-type="CallTool"]'), "×2");
  await timeline.getByText(/^retried after: WorkerLost/).waitFor();
  await timeline.getByText(/^failed: WorkerLost/).waitFor();
  await timeline.locator('[data-step-type="RecordToolOutcomeUnknown"]').waitFor();
  await assertAxisLabelsApart(page);
  await saveScreenshot(page, "dev-inspector.png");
});

void test("perdure dev in Chromium: killed mid-answer before the page got any of the turn, started again, and reconnected only after the turn completed, the page gets a 204 and shows the stored reply without a reload", testOptions, async (t) => {
  const prepared = await prepare(t);
  const { gateDirectory } = prepared;
  let server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);
  const streamPath = `/api/chat/${encodeURIComponent(sessionId)}/stream`;
  const connectionLost = page.getByRole("status").filter({ hasText: "Connection lost" });

  // A reconnect that carries the resume token of the turn replays that turn
  // even once it has completed, so a 204 reaches only a page that holds no
  // token: one whose connection dropped after the message was sent but before
  // the turn's first part arrived (the page then shows only the user's
  // message). The test makes that drop deterministic at the browser's edge:
  // the page's POST goes to the server from here, and once the server has
  // accepted the message (status 200) the browser sees the connection reset.
  const forwardedPosts: string[] = [];
  await page.route((url) => url.pathname === "/api/chat", async (route) => {
    const request = route.request();
    const response = await fetch(new URL(request.url()), { method: "POST", headers: { "content-type": "application/json", origin: server.origin }, body: request.postData() ?? "" });
    forwardedPosts.push(response.status === 200 ? "accepted" : `${response.status} ${await response.text()}`);
    await response.body?.cancel();
    await route.abort("connectionreset");
  });
  // Every reconnect of the chat's stream is held in the browser, unsent,
  // until the turn has completed (seen through the API): a reconnect that
  // reached the server while the turn ran would follow it and get a token.
  // Held reconnects then go to the server unchanged; the rest of the page
  // (the session list, the polled inspection, the events) is not held.
  let releaseReconnects: () => void = () => undefined;
  const reconnectsReleased = new Promise<void>((resolveRelease) => { releaseReconnects = resolveRelease; });
  let heldReconnects = 0;
  await page.route((url) => url.pathname === streamPath, async (route) => {
    heldReconnects += 1;
    await reconnectsReleased;
    await route.continue();
  });

  const answerGate = new FileGate(gateDirectory, "answer-2001");
  await send(page, "where is order 2001?");
  await connectionLost.waitFor();
  assert.deepEqual(forwardedPosts, ["accepted"]);
  await pollUntil(() => heldReconnects > 0, { timeoutMs: uiTimeoutMs, description: "the page to try to reconnect" });
  await answerGate.waitUntilReached({ timeoutMs: uiTimeoutMs });
  await server.kill();
  answerGate.open();
  server = await startServer(prepared);
  const chat = await settledChat(server.url, sessionId);
  const stored = storedTexts(storedAssistant(chat, "turn-1"));
  assert.deepEqual(stored, ["Let me look up order 2001.", "Order 2001 (Camping stove, 45.00 USD) is delivered. It was delivered; ask for a refund within 30 days if anything is wrong with it."]);
  // The page's own inspection has seen the turn end, so it has no turn to follow: only the reconnect can bring the reply in.
  await page.locator(".workspace-title").getByText("idle", { exact: true }).waitFor();
  assert.equal(await page.getByTestId("assistant-message").count(), 0, "the page showed part of the turn before it reconnected");

  await page.evaluate(() => { (window as { perdureNotReloaded?: boolean }).perdureNotReloaded = true; });
  const reconnect = page.waitForResponse((response) => new URL(response.url()).pathname === streamPath);
  releaseReconnects();
  assert.equal((await reconnect).status(), 204);
  // The UI's promise is the reply within 2 s of the reconnect; a loose bound, as without reading the stored messages again it never shows.
  const turn1 = assistantMessage(page, "turn-1");
  await turn1.getByText("ask for a refund within 30 days").waitFor({ state: "visible", timeout: 2000 });
  assert.deepEqual(await shownTexts(turn1), stored);
  assert.equal(await page.evaluate(() => (window as { perdureNotReloaded?: boolean }).perdureNotReloaded), true, "the page reloaded");
  await connectionLost.waitFor({ state: "hidden" });
});
