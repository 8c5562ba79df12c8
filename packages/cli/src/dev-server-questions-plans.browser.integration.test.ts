/**
 * Browser tests of `perdure dev` for questions, plans and durable waits: the
 * real CLI in a child process on a temporary SQLite store, headless Debian
 * Chromium through playwright-core, and the gated support agent, whose
 * scripted model asks which size for an exchange (`ask_user`), drafts a plan
 * in plan mode (`write_todos`) and works through it once approved, and waits
 * durably when asked to check again later (`durable_wait`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { durableWaitTimerId } from "@perdure/agents";
import type { AgentSnapshotWire } from "@perdure/agents/contract/ui-stream";
import { FileGate, pollUntil } from "@perdure/agents/testing";
import { Client } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import type { Locator, Page } from "playwright-core";
import {
  assistantMessage,
  getJson,
  openBrowser,
  prepare,
  saveScreenshot,
  send,
  settledChat,
  startServer,
  startSession,
  storedAssistant,
  testOptions,
  toolCard,
  uiTimeoutMs,
  waitForBadge,
  waitForText,
} from "./test-fixtures/dev-browser.ts";


async function snapshotOf(serverUrl: string, sessionId: string): Promise<AgentSnapshotWire> {
  return (await getJson<{ snapshot: AgentSnapshotWire }>(`${serverUrl}/api/sessions/${encodeURIComponent(sessionId)}/inspect`)).snapshot;
}

function questionCard(scope: Locator): Locator {
  return scope.getByTestId("question-card");
}

/** Waits until the card's `data-state` is `state` (open, sending, answered, declined, …). */
async function waitForCardState(card: Locator, state: string): Promise<void> {
  await pollUntil(async () => ((await card.getAttribute("data-state")) === state ? true : undefined), { timeoutMs: uiTimeoutMs, intervalMs: 50, description: `the question card to be ${state}` });
}

function planView(page: Page): Locator {
  return page.getByTestId("plan-view");
}

async function shownTasks(page: Page): Promise<string[]> {
  return planView(page).locator(".plan-task").evaluateAll((items) => items.map((item) => `${item.getAttribute("data-status") ?? "?"}: ${item.textContent ?? ""}`));
}

void test("perdure dev in Chromium: the agent asks which size; the question card survives a reload, takes the answer, and the turn goes on with it; a second question is declined", testOptions, async (t) => {
  const prepared = await prepare(t);
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);

  await send(page, "please exchange order 1001");
  const turn1 = assistantMessage(page, "turn-1");
  const card = questionCard(turn1);
  await waitForText(card, "Which size would you like instead for order 1001?");
  await waitForCardState(card, "open");
  await waitForText(card, "needs an answer");
  assert.equal(await toolCard(turn1, "ask_user").count(), 0, "the ask_user call shows as its question, not as a tool card");
  await waitForText(page.locator(".workspace-title"), "needs an answer");
  let snapshot = await snapshotOf(server.url, sessionId);
  assert.deepEqual(snapshot.pending_interrupts.map((interrupt) => interrupt.kind), ["question"]);
  assert.deepEqual(await card.getByRole("group", { name: "Choices" }).getByRole("button").allInnerTexts(), ["S", "M", "L", "XL"]);
  assert.equal(await card.getByRole("textbox", { name: "Your answer" }).count(), 0, "the question allows no free text");
  await saveScreenshot(page, "dev-question.png");

  // The question is durable: a reload rebuilds the card from the session.
  await page.reload();
  await waitForCardState(questionCard(turn1), "open");
  assert.equal(await questionCard(page.locator("body")).count(), 1, "the reload lost or repeated the question");

  await questionCard(turn1).getByRole("button", { name: "M", exact: true }).click();
  await waitForText(turn1, "Done: order 1001 will be exchanged for size M.");
  await waitForCardState(questionCard(turn1), "answered");
  await waitForText(questionCard(turn1), "Answered: M");
  let chat = await settledChat(server.url, sessionId);
  const askPart = storedAssistant(chat, "turn-1").parts.find((part) => part.type === "dynamic-tool" && part.toolName === "ask_user");
  assert.deepEqual([askPart?.state, askPart?.output], ["output-available", '{"status":"answered","answer":"M"}']);
  snapshot = await snapshotOf(server.url, sessionId);
  assert.deepEqual(snapshot.pending_interrupts, []);
  // Once the turn is over the chat shows the stored turn: the question stays, answered.
  await page.reload();
  await waitForCardState(questionCard(turn1), "answered");
  await waitForText(questionCard(turn1), "Answered: M");

  // A decline, with a message for the agent.
  await send(page, "please exchange order 1003");
  const turn2 = assistantMessage(page, "turn-2");
  const second = questionCard(turn2);
  await waitForCardState(second, "open");
  await second.getByRole("button", { name: "Decline…" }).click();
  await second.getByRole("textbox", { name: "Message for the agent" }).fill("I will keep it");
  await second.getByRole("button", { name: "Decline", exact: true }).click();
  await waitForText(turn2, "No problem, I left order 1003 as it is.");
  await waitForCardState(second, "declined");
  await waitForText(second, "I will keep it");
  chat = await settledChat(server.url, sessionId);
  const declined = storedAssistant(chat, "turn-2").parts.find((part) => part.type === "dynamic-tool" && part.toolName === "ask_user");
  assert.equal(declined?.output, "I will keep it");
});

void test("perdure dev in Chromium: a question asked while another call of the turn still runs is answered at once, and the turn goes on when that call ends", testOptions, async (t) => {
  const prepared = await prepare(t);
  const { gateDirectory, invocations } = prepared;
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);

  // The lookup of order 2002 waits at its gate, so the turn's stream stays open while the question waits.
  const lookupGate = new FileGate(gateDirectory, "lookup_order-2002");
  await send(page, "please exchange order 2002");
  await lookupGate.waitUntilReached({ timeoutMs: uiTimeoutMs });
  const turn1 = assistantMessage(page, "turn-1");
  const card = questionCard(turn1);
  await waitForCardState(card, "open");
  await waitForBadge(toolCard(turn1, "lookup_order"), "running");
  const choice = card.getByRole("button", { name: "L", exact: true });
  assert.equal(await choice.isEnabled(), true, "the question can be answered while the stream runs");
  await choice.click();
  await waitForCardState(card, "answered");
  assert.deepEqual((await snapshotOf(server.url, sessionId)).pending_interrupts, []);
  assert.equal(invocations.count("lookup_order:done"), 0, "the answer did not wait for the other call");
  lookupGate.open();
  await waitForText(turn1, "Done: order 2002 will be exchanged for size L.");
  await waitForText(card, "Answered: L");
  const chat = await settledChat(server.url, sessionId);
  const askPart = storedAssistant(chat, "turn-1").parts.find((part) => part.type === "dynamic-tool" && part.toolName === "ask_user");
  assert.equal(askPart?.output, '{"status":"answered","answer":"L"}');
});

void test("perdure dev in Chromium: plan first drafts a plan; approve and execute runs it task by task, the refund inside it waits for approval, and the plan view follows the tasks to completed", testOptions, async (t) => {
  const prepared = await prepare(t);
  const { invocations } = prepared;
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);

  const planToggle = page.getByRole("button", { name: "Plan first" });
  await planToggle.click();
  assert.equal(await planToggle.getAttribute("aria-pressed"), "true");
  await send(page, "please refund order 1003");
  const turn1 = assistantMessage(page, "turn-1");
  await waitForText(turn1, "The plan is ready for your review");
  const plan = planView(page);
  await plan.waitFor();
  await pollUntil(async () => ((await plan.getAttribute("data-status")) === "draft" ? true : undefined), { timeoutMs: uiTimeoutMs, description: "a draft plan" });
  assert.equal(await plan.getAttribute("data-revision"), "1");
  assert.deepEqual(await shownTasks(page), ["pending: Look up order 1003", "pending: Refund order 1003", "pending: Tell the customer what was done"]);
  await waitForText(plan, "draft · needs approval");
  await waitForText(turn1, "Plan revision 1: 3 tasks");
  assert.equal(invocations.count("lookup_order:start"), 0, "a planning turn runs nothing");
  const execute = plan.getByRole("button", { name: "Approve and execute" });
  await pollUntil(async () => ((await execute.isEnabled()) ? true : undefined), { timeoutMs: uiTimeoutMs, description: "the session to be idle for the approval" });
  await saveScreenshot(page, "dev-plan.png");

  await execute.click();
  const turn2 = assistantMessage(page, "turn-2");
  await page.getByTestId("session-note").filter({ hasText: "You approved plan revision 1" }).waitFor();
  // The executing turn looks the order up, then stops at the refund's approval.
  const refund = toolCard(turn2, "refund_order");
  await waitForBadge(refund, "needs approval");
  await pollUntil(async () => (JSON.stringify(await shownTasks(page)) === JSON.stringify(["completed: Look up order 1003", "in_progress: Refund order 1003", "pending: Tell the customer what was done"]) ? true : undefined),
    { timeoutMs: uiTimeoutMs, description: "the plan view to show the refund in progress" });
  assert.equal(await plan.getAttribute("data-status"), "active");
  assert.equal(invocations.count("lookup_order:done"), 1);
  assert.equal(invocations.count("refund_order:start"), 0, "the refund ran before it was approved");
  await saveScreenshot(page, "dev-plan-executing.png");
  await refund.getByRole("button", { name: "Approve" }).click();
  await waitForText(turn2, "Refund result: refunded 32.00 USD for order 1003 (Headlamp)");
  await pollUntil(async () => ((await plan.getAttribute("data-status")) === "completed" ? true : undefined), { timeoutMs: uiTimeoutMs, description: "the plan to be completed" });
  assert.deepEqual(await shownTasks(page), ["completed: Look up order 1003", "completed: Refund order 1003", "completed: Tell the customer what was done"]);
  assert.equal(await plan.getByRole("button", { name: /execute/i }).count(), 0, "a completed plan offers no execution");

  await settledChat(server.url, sessionId);
  const snapshot = await snapshotOf(server.url, sessionId);
  assert.equal(snapshot.plan?.status, "completed");
  assert.equal(snapshot.plan?.revision, 5, "the draft, then one write_todos per task and the final one");
  assert.equal(await plan.getAttribute("data-revision"), "5");
  assert.equal(invocations.count("refund_order:done"), 1);
  assert.equal(invocations.count("lookup_order:done"), 1);
});

void test("perdure dev in Chromium: a durable wait shows when it ends, in the turn and the session's status, and the turn goes on once its timer fires", testOptions, async (t) => {
  const prepared = await prepare(t);
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  const sessionId = await startSession(page, server.url);

  const sentAt = Date.now();
  await send(page, "please check order 1002 again in 60 minutes");
  const turn1 = assistantMessage(page, "turn-1");
  const wait = turn1.getByTestId("durable-wait");
  await waitForText(wait, "Waiting durably until");
  const waitUntil = Date.parse(await wait.getAttribute("data-wait-until") ?? "");
  assert.ok(waitUntil - sentAt > 59 * 60_000 && waitUntil - sentAt < 61 * 60_000, `the wait ends ${waitUntil - sentAt} ms after the message, not an hour`);
  await waitForText(wait, "check order 1002 again");
  await wait.getByText(/^in (59|60)m/).waitFor();
  await waitForText(page.locator(".workspace-title"), "waiting until");
  assert.equal(await toolCard(turn1, "durable_wait").count(), 0, "the wait shows as its timer, not as a tool card");
  await saveScreenshot(page, "dev-durable-wait.png");

  // Fire the timer early from a Client of the same store, as `client.skipTimer` does in operations.
  const snapshot = await snapshotOf(server.url, sessionId);
  const call = snapshot.tool_calls.find((candidate) => candidate.tool_name === "durable_wait");
  assert.equal(call?.status, "waiting_for_timer");
  const store = SqliteStore.open({ path: prepared.databasePath });
  t.after(() => store.close());
  assert.equal(await new Client({ store }).skipTimer(sessionId, durableWaitTimerId(call?.tool_call_id ?? "")), 1);
  const chat = await settledChat(server.url, sessionId);
  assert.match(JSON.stringify(storedAssistant(chat, "turn-1").parts), /Order 1002 \(Rain jacket, 84.50 USD\) is processing\./);
  await waitForText(turn1, "Order 1002 (Rain jacket, 84.50 USD) is processing.");
  await waitForText(wait, "Waited until");
  await waitForText(wait, "done");
});
