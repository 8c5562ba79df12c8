/**
 * Accessibility of `perdure dev`'s web UI (issue 41): the real CLI in a child
 * process on a temporary SQLite store, headless Debian Chromium through
 * playwright-core, the gated support agent, and axe-core's WCAG 2.1 A and AA
 * rules in every state a person meets: the welcome page, an empty session,
 * an answer streaming, an approval, a question, a plan to approve, the
 * inspector's three tabs with an event opened, each layout, and the same in
 * the dark theme.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { FileGate } from "@perdure/agents/testing";
import type { Page } from "playwright-core";
import { assertNoAxeViolations } from "./test-fixtures/accessibility.ts";
import {
  assistantMessage,
  openBrowser,
  prepare,
  saveScreenshot,
  send,
  startServer,
  startSession,
  testOptions,
  toolCard,
  waitForBadge,
  waitForText,
} from "./test-fixtures/dev-browser.ts";

/** Checks `state` in the light theme and again in the dark one. */
async function checkBothThemes(page: Page, state: string): Promise<void> {
  await page.emulateMedia({ colorScheme: "light" });
  await assertNoAxeViolations(page, state);
  await page.emulateMedia({ colorScheme: "dark" });
  await assertNoAxeViolations(page, `${state} (dark)`);
  await page.emulateMedia({ colorScheme: "light" });
}

async function chooseLayout(page: Page, name: "Chat" | "Split" | "Inspector"): Promise<void> {
  const button = page.getByRole("group", { name: "Layout" }).getByRole("button", { name, exact: true });
  await button.click();
  await page.waitForFunction((label) => [...document.querySelectorAll("[aria-pressed=true]")].some((element) => element.textContent === label), name);
}

void test("perdure dev in Chromium: axe-core finds no WCAG 2.1 A or AA violation in any state of the UI, light or dark", { ...testOptions, timeout: 300_000 }, async (t) => {
  const prepared = await prepare(t);
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);

  await page.goto(server.url);
  await page.getByRole("heading", { name: "Durable agent sessions" }).waitFor();
  await checkBothThemes(page, "the welcome page, no sessions");

  await startSession(page, server.url);
  await page.getByRole("heading", { name: "Start the conversation" }).waitFor();
  await checkBothThemes(page, "an empty session, split layout");

  // An answer that streams its first sentence, then waits at its gate.
  const answerGate = new FileGate(prepared.gateDirectory, "answer-2001");
  await send(page, "where is order 2001?");
  await answerGate.waitUntilReached({ timeoutMs: 30_000 });
  const turn1 = assistantMessage(page, "turn-1");
  await turn1.getByTestId("message-text").first().waitFor();
  await checkBothThemes(page, "an answer streaming");
  answerGate.open();
  await page.getByTestId("composer-input").and(page.locator(":not([disabled])")).waitFor();

  await send(page, "please refund order 1003");
  const refund = toolCard(assistantMessage(page, "turn-2"), "refund_order");
  await waitForBadge(refund, "needs approval");
  await checkBothThemes(page, "an approval pending");
  await page.emulateMedia({ colorScheme: "dark" });
  await saveScreenshot(page, "dev-dark.png");
  await page.emulateMedia({ colorScheme: "light" });
  await refund.getByRole("button", { name: "Reject…" }).click();
  await checkBothThemes(page, "the reject reason field open");
  await refund.getByRole("button", { name: "Reject", exact: true }).click();
  await waitForBadge(refund, "rejected");

  await send(page, "please exchange order 1001");
  const question = assistantMessage(page, "turn-3").getByTestId("question-card");
  await question.and(page.locator("[data-state=open]")).waitFor();
  await checkBothThemes(page, "a question pending");
  await question.getByRole("button", { name: "M", exact: true }).click();
  await question.and(page.locator("[data-state=answered]")).waitFor();

  await page.getByRole("button", { name: "Plan first" }).click();
  await send(page, "please refund order 1002");
  const plan = page.getByTestId("plan-view");
  await waitForText(assistantMessage(page, "turn-4"), "The plan is ready for your review");
  await plan.getByRole("button", { name: "Approve and execute" }).and(page.locator(":not([disabled])")).waitFor();
  await checkBothThemes(page, "a plan needing approval");

  await chooseLayout(page, "Chat");
  await checkBothThemes(page, "the chat layout");
  await chooseLayout(page, "Inspector");
  const inspector = page.getByTestId("inspector");
  await inspector.getByTestId("timeline-panel").waitFor();
  await inspector.locator(".tl-exec").first().click();
  await checkBothThemes(page, "the inspector's timeline, a Step opened");
  // The Sub-agents panel: the fixture app has no agentTool, so the browser adds a parent and two children to the
  // session's real inspection response; the panel must render them as links and pass axe in both themes.
  const inspectRoute = "**/api/sessions/*/inspect";
  await page.route(inspectRoute, async (route) => {
    const response = await route.fetch();
    const body = (await response.json()) as Record<string, unknown>;
    await route.fulfill({
      response,
      json: {
        ...body,
        parentSession: { sessionId: "writer-1", toolCallId: "call-1", depth: 1 },
        childSessions: [{ sessionId: "s.research.b", agent: "researcher" }, { sessionId: "s.research.a", agent: "researcher" }],
      },
    });
  });
  const subAgents = inspector.getByTestId("sub-agents-panel");
  await waitForText(subAgents, "Called by writer-1");
  assert.deepEqual(await subAgents.getByTestId("sub-agents-child").allTextContents(), ["s.research.a", "s.research.b"]);
  assert.equal(await subAgents.getByRole("link", { name: "writer-1" }).getAttribute("href"), "/sessions/writer-1");
  await checkBothThemes(page, "the inspector's sub-agents panel");
  // The page polls /inspect: wait for a read still in the handler, or its fulfill meets a route already handed back.
  await page.unrouteAll({ behavior: "wait" });
  await subAgents.waitFor({ state: "detached" });
  await inspector.getByRole("tab", { name: /State/ }).click();
  await inspector.getByTestId("usage-panel").waitFor();
  await checkBothThemes(page, "the inspector's state and usage");
  await inspector.getByRole("tab", { name: /Events/ }).click();
  const events = inspector.getByTestId("event-log");
  await events.locator("[data-event-type=interrupt_resolved]").first().click();
  await events.locator(".event-payload").waitFor();
  await checkBothThemes(page, "the inspector's events, one opened");
  await chooseLayout(page, "Split");
  await checkBothThemes(page, "the split layout with the events");

  // Edit a message: a fork, whose inspector shows its lineage; its source lists the fork.
  await inspector.getByRole("tab", { name: "Timeline" }).click();
  const source = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1) ?? "");
  const edited = page.getByTestId("user-message").filter({ hasText: "please refund order 1003" });
  await edited.hover();
  await edited.getByTestId("edit-message").click();
  await page.getByTestId("edit-message-text").fill("please refund order 1002");
  await page.getByTestId("send-edited-message").click();
  await page.waitForURL((url) => !url.pathname.endsWith(`/${encodeURIComponent(source)}`));
  const lineage = page.getByTestId("lineage-panel");
  await waitForText(lineage, "after turn 1");
  await waitForBadge(toolCard(assistantMessage(page, "turn-2"), "refund_order"), "needs approval");
  await checkBothThemes(page, "a fork with its lineage");
  await lineage.getByTestId("lineage-source").click();
  await page.getByTestId("lineage-panel").getByTestId("lineage-forks").waitFor();
  await checkBothThemes(page, "a session with a fork");
});

/** The accessible name of the focused element as the tests compare it: its aria-label, else its text. */
async function focusedName(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement;
    if (element === null || element === document.body) return "<body>";
    return (element.getAttribute("aria-label") ?? element.textContent ?? "").trim();
  });
}

/** Presses Tab (or Shift+Tab) until the focused element is named `name`; fails after `max` presses. */
async function tabTo(page: Page, name: string, options: { backwards?: boolean; max?: number } = {}): Promise<void> {
  const seen: string[] = [];
  for (let press = 0; press < (options.max ?? 60); press++) {
    await page.keyboard.press(options.backwards === true ? "Shift+Tab" : "Tab");
    const current = await focusedName(page);
    if (current === name) return;
    seen.push(current);
  }
  throw new Error(`Tab never reached ${JSON.stringify(name)}; it went through ${JSON.stringify(seen)}`);
}

/** Waits until the focused element is named `name`. */
async function waitForFocus(page: Page, name: string): Promise<void> {
  await page.waitForFunction((expected) => {
    const element = document.activeElement;
    return element !== null && element !== document.body && (element.getAttribute("aria-label") ?? element.textContent ?? "").trim() === expected;
  }, name);
}

/**
 * Records every animation frame in which the focus sits on `<body>` once
 * something had it: what a keyboard user sees as focus lost.
 */
async function watchFocus(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const lost: string[] = [];
    const path: string[] = [];
    let had: string | null = null;
    const check = (): void => {
      const element = document.activeElement;
      if (element !== null && element !== document.body) {
        const now = `${element.tagName.toLowerCase()} ${(element.getAttribute("aria-label") ?? element.textContent ?? "").trim().slice(0, 40)}`;
        if (now !== had) path.push(now);
        had = now;
      } else if (had !== null && !had.startsWith("a Skip to the message box") && lost.at(-1) !== `after ${had}`) {
        // Shift+Tab from the skip link, the page's first stop, leaves the page for the browser's own
        // controls: a walk that wraps around, not focus the page lost.
        lost.push(`after ${had} (the focus went ${path.slice(-6).join(" → ")})`);
      }
      window.requestAnimationFrame(check);
    };
    window.requestAnimationFrame(check);
    (window as unknown as { focusLost: string[] }).focusLost = lost;
  });
  return () => page.evaluate(() => (window as unknown as { focusLost: string[] }).focusLost);
}

const messageBox = "Message the agent";

/** Keeps what the page's live region ever said: it drops each message after a while, and a slow machine may look later. */
async function recordAnnouncements(page: Page): Promise<void> {
  await page.evaluate(() => {
    const page = window as unknown as { announced?: string[] };
    if (page.announced !== undefined) return;
    const announced: string[] = [];
    page.announced = announced;
    const record = (): void => {
      const said = document.querySelector("[data-testid=live-announcer]")?.textContent ?? "";
      if (said !== "" && announced.at(-1) !== said) announced.push(said);
    };
    record();
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

/** Waits until the page's live region says `text` (it is hidden from sight, so only its text is read). */
async function waitForAnnouncement(page: Page, text: string): Promise<void> {
  try {
    await recordAnnouncements(page);
    await page.waitForFunction((expected) => {
      const announced = (window as unknown as { announced?: string[] }).announced ?? [];
      return announced.some((said) => said.includes(expected)) || document.querySelector("[data-testid=live-announcer]")?.textContent?.includes(expected) === true;
    }, text);
  } catch (error) {
    const said = await page.getByTestId("live-announcer").textContent();
    throw new Error(`the live region never said ${JSON.stringify(text)}; it says ${JSON.stringify(said)}`, { cause: error });
  }
}

async function typeAndSend(page: Page, text: string): Promise<void> {
  await waitForFocus(page, messageBox);
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
  await page.getByTestId("user-message").filter({ hasText: text }).waitFor();
}

void test("perdure dev in Chromium by keyboard alone: start a session, approve, reject (Escape closes the reason), answer, approve a plan and stop a turn, and the focus never falls to <body>", testOptions, async (t) => {
  const prepared = await prepare(t);
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  await page.goto(server.url);
  await page.getByRole("heading", { name: "Durable agent sessions" }).waitFor();
  const focusLost = await watchFocus(page);
  await recordAnnouncements(page);

  // The skip link comes first; on the welcome page it leads to the page's content.
  await page.keyboard.press("Tab");
  assert.equal(await focusedName(page), "Skip to the message box");
  await tabTo(page, "New session");
  await page.keyboard.press("Enter");
  // The new session's message box takes the focus once its chat has loaded.
  await waitForFocus(page, messageBox);
  await page.waitForURL(/\/sessions\/[^/]+$/);

  // Approve: focus goes back to the message box.
  await typeAndSend(page, "please refund order 1003");
  const refund = toolCard(assistantMessage(page, "turn-1"), "refund_order");
  await waitForBadge(refund, "needs approval");
  // A screen reader hears the answer once it is complete, the new approval and the status it brings.
  await waitForAnnouncement(page, "The agent answered: I can refund order 1003 once you approve it.");
  await waitForAnnouncement(page, "refund_order needs your approval.");
  await waitForAnnouncement(page, "Session needs approval.");
  await tabTo(page, "Approve", { backwards: true });
  await page.keyboard.press("Enter");
  await waitForFocus(page, messageBox);
  await waitForAnnouncement(page, "Approved refund_order.");
  await waitForBadge(refund, "done");

  // Reject: Escape closes the reason field and gives the focus back to "Reject…"; then reject with a reason.
  await typeAndSend(page, "please refund order 1002");
  const second = toolCard(assistantMessage(page, "turn-2"), "refund_order");
  await waitForBadge(second, "needs approval");
  await tabTo(page, "Reject…", { backwards: true });
  await page.keyboard.press("Enter");
  await waitForFocus(page, "Reason for the agent (optional)");
  await page.keyboard.press("Escape");
  await waitForFocus(page, "Reject…");
  assert.equal(await second.getByRole("textbox").count(), 0, "Escape left the reason field open");
  await page.keyboard.press("Enter");
  await waitForFocus(page, "Reason for the agent (optional)");
  await page.keyboard.type("not this one");
  await page.keyboard.press("Enter");
  await waitForFocus(page, messageBox);
  await waitForBadge(second, "rejected");

  // Answer a question with its choice.
  await typeAndSend(page, "please exchange order 1001");
  const question = assistantMessage(page, "turn-3").getByTestId("question-card");
  await question.and(page.locator("[data-state=open]")).waitFor();
  await waitForAnnouncement(page, "The agent asks: Which size would you like instead for order 1001?");
  await tabTo(page, "M", { backwards: true });
  await page.keyboard.press("Enter");
  await waitForFocus(page, messageBox);
  await question.and(page.locator("[data-state=answered]")).waitFor();

  // Plan first, then approve the plan.
  await tabTo(page, "Plan first");
  await page.keyboard.press("Enter");
  assert.equal(await page.getByRole("button", { name: "Plan first" }).getAttribute("aria-pressed"), "true");
  await tabTo(page, messageBox, { backwards: true });
  await typeAndSend(page, "please look up order 1001");
  const plan = page.getByTestId("plan-view");
  await waitForText(assistantMessage(page, "turn-4"), "The plan is ready for your review");
  await plan.getByRole("button", { name: "Approve and execute" }).and(page.locator(":not([disabled])")).waitFor();
  await tabTo(page, "Approve and execute", { backwards: true });
  await page.keyboard.press("Enter");
  await waitForFocus(page, messageBox);
  await page.waitForFunction(() => document.querySelector("[data-testid=plan-view]")?.getAttribute("data-status") === "completed");

  // Stop a turn whose answer waits at its gate: Stop gives the focus to the message box.
  const answerGate = new FileGate(prepared.gateDirectory, "answer-2001");
  await typeAndSend(page, "where is order 2001?");
  await answerGate.waitUntilReached({ timeoutMs: 30_000 });
  // Once the page's snapshot has the running turn, its Stop button stays until the turn ends.
  await waitForText(page.locator(".workspace-title"), "thinking");
  await page.getByTestId("stop-turn").waitFor();
  await tabTo(page, "Stop");
  await page.keyboard.press("Enter");
  await waitForFocus(page, messageBox);
  await page.getByTestId("turn-control-notice").filter({ hasText: "Stopped" }).waitFor();

  await waitForAnnouncement(page, "Stopped turn 6.");

  // The inspector by keyboard: the layout switch, the tabs with arrow keys, an event row opened with Enter.
  // Backwards: forwards, Tab would run off the end of the page (to the browser) before it wrapped to the header.
  await tabTo(page, "Inspector", { backwards: true });
  await page.keyboard.press("Enter");
  await page.getByTestId("inspector").waitFor();
  await tabTo(page, "Timeline");
  await page.keyboard.press("ArrowRight");
  await waitForFocus(page, "State & usage");
  assert.equal(await page.getByRole("tab", { name: "State & usage" }).getAttribute("aria-selected"), "true");
  await page.keyboard.press("End");
  const eventsTab = page.getByRole("tab", { name: /^Events/ });
  await page.waitForFunction(() => document.activeElement?.id === "inspector-tab-events");
  assert.equal(await eventsTab.getAttribute("aria-selected"), "true");
  await page.keyboard.press("ArrowLeft");
  await waitForFocus(page, "State & usage");
  await page.keyboard.press("ArrowRight");
  await page.waitForFunction(() => document.activeElement?.id === "inspector-tab-events");
  // Only the selected tab is in the Tab order: the next Tab leaves the tab list for the panel.
  await page.keyboard.press("Tab");
  assert.notEqual(await page.evaluate(() => document.activeElement?.getAttribute("role")), "tab");
  // The event list scrolls, so it takes the focus itself (arrows scroll it); its rows come next.
  await tabTo(page, "Event list", { max: 5 });
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement?.closest("[data-event-type]")?.getAttribute("data-event-type")), "turn_started");
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("aria-expanded")), "false");
  await page.keyboard.press("Enter");
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("aria-expanded")), "true");
  await page.getByTestId("event-log").locator(".event-payload").waitFor();

  assert.deepEqual(await focusLost(), [], "the focus fell to <body>");
});

/** What spills out of a `width`-wide window: the page's sideways scroll and every visible control not wholly inside it. */
async function outsideTheWindow(page: Page): Promise<{ sidewaysScroll: number; controls: string[] }> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const height = window.innerHeight;
    const controls = [...document.querySelectorAll<HTMLElement>("button, a[href], input, select, textarea, [tabindex]")].flatMap((element) => {
      const box = element.getBoundingClientRect();
      if (box.width === 0 || box.height === 0 || element.closest(".visually-hidden") !== null || element.classList.contains("skip-link")) return [];
      // A control inside a region that scrolls up and down may be scrolled out of view; it must still fit the width.
      let scrolledAway = false;
      for (let parent = element.parentElement; parent !== null && !scrolledAway; parent = parent.parentElement) {
        const overflow = getComputedStyle(parent).overflowY;
        scrolledAway = (overflow === "auto" || overflow === "scroll") && parent.scrollHeight > parent.clientHeight;
      }
      const inside = box.left >= -0.5 && box.right <= width + 0.5 && (scrolledAway || (box.top >= -0.5 && box.bottom <= height + 0.5));
      return inside ? [] : [`${element.tagName.toLowerCase()} "${(element.getAttribute("aria-label") ?? element.textContent ?? "").trim().slice(0, 30)}" at ${Math.round(box.left)}..${Math.round(box.right)} × ${Math.round(box.top)}..${Math.round(box.bottom)}`];
    });
    return { sidewaysScroll: document.documentElement.scrollWidth - width, controls };
  });
}

/** The infinite animations running on the page. */
async function loopingAnimations(page: Page): Promise<number> {
  return page.evaluate(() => document.getAnimations().filter((animation) => animation.playState === "running" && animation.effect?.getTiming().iterations === Infinity).length);
}

void test("perdure dev in Chromium at 390×844, 360×740 and 720×450 (200 % zoom): no sideways scroll, every control inside the window, the session list behind a menu button; reduced motion stops every loop", testOptions, async (t) => {
  const prepared = await prepare(t);
  const server = await startServer(prepared);
  const { page } = await openBrowser(prepared);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(server.url);
  // No session list beside the page: the welcome page's own button starts one.
  await page.getByRole("main").getByRole("button", { name: "New session" }).click();
  await page.waitForURL(/\/sessions\/[^/]+$/);
  const sessionId = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1) ?? "");

  // A turn that streams and waits at its gate, so Stop shows beside Send and Plan first.
  const answerGate = new FileGate(prepared.gateDirectory, "answer-2001");
  await send(page, "where is order 2001?");
  await answerGate.waitUntilReached({ timeoutMs: 30_000 });
  await page.getByTestId("stop-turn").waitFor();

  // Motion first: the streaming turn pulses, unless the person asked for less motion.
  assert.ok(await loopingAnimations(page) > 0, "the streaming turn shows no looping animation to stop");
  await page.emulateMedia({ reducedMotion: "reduce" });
  assert.equal(await loopingAnimations(page), 0, "an infinite animation runs under prefers-reduced-motion: reduce");
  await page.emulateMedia({ reducedMotion: "no-preference" });

  // 720×450 is a 1440×900 window at 200 % zoom.
  for (const size of [{ width: 390, height: 844 }, { width: 360, height: 740 }, { width: 720, height: 450 }]) {
    await page.setViewportSize(size);
    const where = `${size.width}×${size.height}`;
    for (const layout of ["Chat", "Split", "Inspector"] as const) {
      await chooseLayout(page, layout);
      assert.deepEqual(await outsideTheWindow(page), { sidewaysScroll: 0, controls: [] }, `${layout} at ${where}`);
      if (layout === "Split") {
        // Split gives the messages the whole height, the inspector below them, rather than two slivers.
        const messagesHeight = await page.locator(".chat-scroll").evaluate((element) => element.clientHeight);
        assert.ok(messagesHeight >= size.height / 3, `the messages get ${messagesHeight} px of ${where} in Split`);
      }
    }
    await chooseLayout(page, "Chat");
    await saveScreenshot(page, `dev-phone-${where}.png`);
    // The send button says "Queue" while the turn runs.
    await page.getByTestId("send-button").waitFor({ state: "visible" });
    for (const name of ["Stop", "Plan first", "Stop session", "Sessions", "Chat", "Split", "Inspector"]) {
      await page.getByRole("button", { name, exact: true }).waitFor({ state: "visible" });
    }

    // The session list opens as a drawer from the menu button, and Escape closes it.
    const menu = page.getByRole("button", { name: "Sessions", exact: true });
    await menu.click();
    const list = page.getByRole("complementary", { name: "Sessions" });
    await list.getByRole("button", { name: "New session" }).waitFor({ state: "visible" });
    assert.equal(await menu.getAttribute("aria-expanded"), "true");
    await list.locator(".session-item").filter({ hasText: sessionId }).waitFor({ state: "visible" });
    assert.deepEqual(await outsideTheWindow(page), { sidewaysScroll: 0, controls: [] }, `the open session list at ${where}`);
    await saveScreenshot(page, `dev-phone-${where}-sessions.png`);
    await page.keyboard.press("Escape");
    await list.waitFor({ state: "hidden" });
    assert.equal(await focusedName(page), "Sessions", "Escape gave the focus back to the menu button");
  }
  await page.setViewportSize({ width: 390, height: 844 });
  await assertNoAxeViolations(page, "a streaming turn at 390×844");
  answerGate.open();
});
