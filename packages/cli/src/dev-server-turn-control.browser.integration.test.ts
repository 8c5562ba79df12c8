/**
 * Browser tests of `perdure dev` for turn control: the real CLI in a child
 * process on a temporary SQLite store, headless Debian Chromium through
 * playwright-core, and the gated support agent. A message queued while a
 * turn runs is sent into it ("Send now", `steer_user_message`) or deleted
 * (`delete_queued_message`), and the Stop button stops a running model call
 * (`cancel_turn`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AgentSnapshotWire } from "@perdure/agents/contract/ui-stream";
import { FileGate, pollUntil } from "@perdure/agents/testing";
import type { Page } from "playwright-core";
import {
  assistantMessage,
  getJson,
  holdSessionReads,
  openBrowser,
  prepare,
  saveScreenshot,
  send,
  settledChat,
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


async function snapshotOf(serverUrl: string, sessionId: string): Promise<AgentSnapshotWire> {
  return (await getJson<{ snapshot: AgentSnapshotWire }>(`${serverUrl}/api/sessions/${encodeURIComponent(sessionId)}/inspect`)).snapshot;
}

/** Types a message while a turn runs: it goes to the session's queue, not into the chat. */
async function queue(page: Page, text: string): Promise<void> {
  const composer = page.getByTestId("composer-input");
  await composer.fill(text);
  await page.getByTestId("send-button").filter({ hasText: "Queue" }).waitFor();
  await composer.press("Enter");
  await page.getByTestId("queued-message").filter({ hasText: text }).waitFor();
}

void test("perdure dev in Chromium: a message queued while a tool runs is sent into the turn with Send now; the turn ends after the tool, and the next turn answers it", testOptions, async (t) => {
  const prepared = await prepare(t);
  const { gateDirectory, invocations } = prepared;
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);

  // The server says what its agent accepts; this one plans first on request, so the composer offers it.
  const agents = await getJson<{ agents: string[]; features: Record<string, { planModeEnabled: boolean; builtInTools: string[] }> }>(`${server.url}/api/agents`);
  assert.deepEqual(agents.agents, ["SupportAgent"]);
  assert.equal(agents.features.SupportAgent?.planModeEnabled, true);
  assert.deepEqual([...(agents.features.SupportAgent?.builtInTools ?? [])].sort(), ["ask_user", "durable_wait", "write_todos"]);
  await page.getByRole("button", { name: "Plan first" }).waitFor();

  const lookupGate = new FileGate(gateDirectory, "lookup_order-2002");
  await send(page, "where is order 2002?");
  await lookupGate.waitUntilReached({ timeoutMs: uiTimeoutMs });
  const turn1 = assistantMessage(page, "turn-1");
  await waitForBadge(toolCard(turn1, "lookup_order"), "running");
  await page.getByTestId("stop-turn").waitFor();

  await queue(page, "where is order 1001?");
  const [queued] = (await snapshotOf(server.url, sessionId)).queued_messages;
  assert.equal(queued?.text, "where is order 1001?");
  await saveScreenshot(page, "dev-queued-message.png");
  await page.getByTestId("queued-message").filter({ hasText: "where is order 1001?" }).getByRole("button", { name: "Send now" }).click();

  // The steered message waits for the running lookup: a started tool runs to its end.
  await page.getByTestId("steered-message").filter({ hasText: "where is order 1001?" }).waitFor();
  assert.equal(await page.getByTestId("queued-message").count(), 0, "the steered message is still shown as queued");
  let snapshot = await snapshotOf(server.url, sessionId);
  assert.deepEqual([snapshot.queued_messages, snapshot.steered_messages.map((message) => message.text), snapshot.state?.active_turn_id], [[], ["where is order 1001?"], "turn-1"]);
  assert.equal(invocations.count("lookup_order:done"), 0);

  lookupGate.open();
  const notice = turn1.getByTestId("turn-control-notice");
  await waitForText(notice, "Steered: your message took over in the next turn.");
  assert.equal(await notice.getAttribute("data-outcome"), "steered");
  const turn2 = assistantMessage(page, "turn-2");
  await waitForText(turn2, "Order 1001 (Trail running shoes, 129.00 USD) is shipped.");
  await page.getByTestId("user-message").filter({ hasText: "where is order 1001?" }).waitFor();

  const chat = await settledChat(server.url, sessionId);
  // The steered turn keeps the lookup that ran; its model never answered it.
  const steeredTurn = storedAssistant(chat, "turn-1");
  const lookup = steeredTurn.parts.find((part) => part.type === "dynamic-tool" && part.toolName === "lookup_order");
  assert.equal(lookup?.state, "output-available");
  assert.deepEqual(storedTexts(steeredTurn), ["Let me look up order 2002."]);
  assert.ok(storedTexts(storedAssistant(chat, "turn-2")).some((text) => text.includes("Order 1001 (Trail running shoes, 129.00 USD) is shipped.")));
  snapshot = await snapshotOf(server.url, sessionId);
  assert.deepEqual([snapshot.state?.turn_count, snapshot.queued_messages, snapshot.steered_messages], [2, [], []]);
  assert.equal(invocations.count("lookup_order:done"), 2, "each lookup ran once");
  // The page drops the steered message when it next loads the snapshot, which may come after the server's own snapshot above.
  await page.getByTestId("queued-messages").waitFor({ state: "detached", timeout: uiTimeoutMs });
});

void test("perdure dev in Chromium: a queued message deleted while the turn runs never starts a turn", testOptions, async (t) => {
  const prepared = await prepare(t);
  const { gateDirectory, invocations } = prepared;
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);

  const lookupGate = new FileGate(gateDirectory, "lookup_order-2002");
  await send(page, "where is order 2002?");
  await lookupGate.waitUntilReached({ timeoutMs: uiTimeoutMs });
  await queue(page, "please refund order 1003");
  await queue(page, "where is order 1001?");
  await page.getByTestId("queued-message").filter({ hasText: "please refund order 1003" }).getByRole("button", { name: "Delete" }).click();
  await page.getByTestId("queued-message").filter({ hasText: "please refund order 1003" }).waitFor({ state: "detached" });
  assert.deepEqual((await snapshotOf(server.url, sessionId)).queued_messages.map((message) => message.text), ["where is order 1001?"]);
  // A reload shows the session's queue, not this tab's memory of it.
  await page.reload();
  await page.getByTestId("queued-message").filter({ hasText: "where is order 1001?" }).waitFor();
  assert.equal(await page.getByTestId("queued-message").count(), 1);

  lookupGate.open();
  await waitForText(assistantMessage(page, "turn-1"), "Order 2002 (Sleeping bag, 99.00 USD) is processing.");
  // The message that stayed queued starts the next turn; the deleted one never does.
  // It runs in well under the session's 2 s poll; the chat still reads it from the store.
  await waitForText(assistantMessage(page, "turn-2"), "Order 1001 (Trail running shoes, 129.00 USD) is shipped.");
  const chat = await settledChat(server.url, sessionId);
  const userTexts = chat.messages.filter((message) => message.role === "user").map((message) => storedTexts(message).join(""));
  assert.deepEqual(userTexts, ["where is order 2002?", "where is order 1001?"]);
  const snapshot = await snapshotOf(server.url, sessionId);
  assert.deepEqual([snapshot.state?.turn_count, snapshot.queued_messages], [2, []]);
  assert.equal(invocations.count("refund_order:start"), 0, "the deleted message's refund ran");
  assert.equal(await page.getByTestId("queued-messages").count(), 0);
});

void test("perdure dev in Chromium: Stop aborts a model call mid-answer; the turn ends as stopped, nothing else runs, and the session takes the next message", testOptions, async (t) => {
  const prepared = await prepare(t);
  const { invocations } = prepared;
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);

  // The answer about order 2001 streams its first sentence and then waits at its gate, which this test never opens.
  await send(page, "where is order 2001?");
  const turn1 = assistantMessage(page, "turn-1");
  await waitForText(turn1, "Order 2001 (Camping stove, 45.00 USD) is delivered.");
  const stop = page.getByTestId("stop-turn");
  assert.equal(await stop.innerText(), "Stop");
  await saveScreenshot(page, "dev-stop-turn.png");
  await stop.click();

  const notice = turn1.getByTestId("turn-control-notice");
  await waitForText(notice, "Stopped: you stopped this turn");
  assert.equal(await notice.getAttribute("data-outcome"), "cancelled");
  await page.getByTestId("stop-turn").waitFor({ state: "detached" });
  let snapshot = await pollUntil(async () => {
    const current = await snapshotOf(server.url, sessionId);
    return current.state?.active_turn_id === null ? current : undefined;
  }, { timeoutMs: uiTimeoutMs, description: "the stopped turn to end" });
  assert.equal(snapshot.state?.turn_count, 1);
  const chat = await settledChat(server.url, sessionId);
  // The aborted answer is dropped: the stored turn ends with the lookup it ran.
  const stopped = storedAssistant(chat, "turn-1");
  assert.ok(!storedTexts(stopped).some((text) => text.includes("delivered")), `the aborted answer was stored: ${JSON.stringify(storedTexts(stopped))}`);
  assert.equal(invocations.count("lookup_order:done"), 1);

  // Stopped is not stuck: the next message starts a turn at once.
  await send(page, "where is order 1003?");
  await waitForText(assistantMessage(page, "turn-2"), "Order 1003 (Headlamp, 32.00 USD) is delivered.");
  snapshot = await snapshotOf(server.url, sessionId);
  assert.equal(snapshot.state?.turn_count, 2);
});

void test("perdure dev in Chromium: a tool task shows its task and latest status while the session polls it, then its result; Stop abandons a running task as outcome unknown", testOptions, async (t) => {
  const prepared = await prepare(t);
  const { gateDirectory, invocations } = prepared;
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);

  await send(page, "please build the report for order 1001");
  const turn1 = assistantMessage(page, "turn-1");
  const card = toolCard(turn1, "build_report");
  await waitForBadge(card, "task running");
  const task = card.getByTestId("tool-task");
  await waitForText(task, "report-1001");
  assert.equal(await task.getAttribute("data-status"), "running");
  await waitForText(task, "running remotely");
  // A reload rebuilds the task from the session's record, with its poll interval.
  await page.reload();
  await waitForText(toolCard(assistantMessage(page, "turn-1"), "build_report").getByTestId("tool-task"), "polled every 1 s");
  await saveScreenshot(page, "dev-tool-task.png");
  new FileGate(gateDirectory, "report-1001").open();
  await waitForText(assistantMessage(page, "turn-1"), "The report is ready: report for order 1001: shipped.");
  await waitForBadge(toolCard(assistantMessage(page, "turn-1"), "build_report"), "done");
  assert.equal(invocations.count("build_report:start"), 1);
  assert.equal(invocations.count("build_report:done"), 1);

  // Stop does not wait for a running task: the session abandons it and asks the tool to cancel it.
  await send(page, "please build the report for order 1002");
  const turn2 = assistantMessage(page, "turn-2");
  await waitForBadge(toolCard(turn2, "build_report"), "task running");
  await page.getByTestId("stop-turn").click();
  await waitForText(turn2.getByTestId("turn-control-notice"), "Stopped: you stopped this turn");
  await pollUntil(() => invocations.count("build_report:cancel") === 1, { timeoutMs: uiTimeoutMs, description: "the task's cancellation" });
  const chat = await settledChat(server.url, sessionId);
  const abandoned = storedAssistant(chat, "turn-2").parts.find((part) => part.type === "dynamic-tool" && part.toolName === "build_report");
  assert.equal(abandoned?.state, "output-error", JSON.stringify(abandoned));
  await waitForBadge(toolCard(turn2, "build_report"), "failed");
  assert.equal(invocations.count("build_report:done"), 1, "the abandoned task was reported as done");
  const snapshot = await snapshotOf(server.url, sessionId);
  assert.deepEqual([snapshot.state?.turn_count, snapshot.state?.active_turn_id], [2, null]);
});

void test("perdure dev in Chromium: Stop stops the turn this tab streams while the session's snapshot lags behind it, and the turn shows as stopped", testOptions, async (t) => {
  const prepared = await prepare(t);
  const { gateDirectory, invocations } = prepared;
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);
  await page.getByTestId("composer-input").waitFor();

  // From here the page's reads of the session hang, so its snapshot still says no turn runs.
  const releaseReads = await holdSessionReads(t, page);

  await send(page, "please build the report for order 1002");
  const turn1 = assistantMessage(page, "turn-1");
  await waitForBadge(toolCard(turn1, "build_report"), "task running");
  await page.getByTestId("stop-turn").click();
  await waitForText(turn1.getByTestId("turn-control-notice"), "Stopped: you stopped this turn");
  await pollUntil(() => invocations.count("build_report:cancel") === 1, { timeoutMs: uiTimeoutMs, description: "the task's cancellation" });
  const snapshot = await snapshotOf(server.url, sessionId);
  assert.deepEqual([snapshot.state?.turn_count, snapshot.state?.active_turn_id], [1, null]);
  new FileGate(gateDirectory, "report-1002").open();
  await releaseReads();
  assert.equal(invocations.count("build_report:done"), 0, "the abandoned task was reported as done");
});
