/**
 * `perdure dev` in Chromium hosting agents written with other frameworks:
 * the example order desk as an AI SDK `ToolLoopAgent`, an OpenAI Agents
 * SDK `Agent` and a Mastra `Agent`, each made durable by its adapter (the
 * Claude Agent SDK order desk is listed too). For each, a lookup
 * answered from its tool, a refund that runs only after Approve, and the
 * turn's tool Steps in the inspector.
 */
import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { pollUntil } from "@perdure/agents/testing";
import { assistantMessage, getJson, openBrowser, prepare, send, testOptions, toolCard, uiTimeoutMs, waitForBadge, waitForText } from "./test-fixtures/dev-browser.ts";
import { DevServerProcess, repositoryRoot } from "./test-fixtures/dev-server-process.ts";

const adaptersEntry = resolve(repositoryRoot, "examples/framework-agents/src/agents.ts");

void test("perdure dev in Chromium hosts the AI SDK, OpenAI Agents SDK and Mastra order desks: tools in their own Steps, an approved refund, and the inspector's tool Steps", testOptions, async (t) => {
  const prepared = await prepare(t);
  const server = await DevServerProcess.start({ ...prepared, entry: adaptersEntry, env: { PERDURE_NOTES_FILE: join(prepared.folder, "notes.json") } });
  prepared.defer(() => server.stop());
  const { page } = await openBrowser(prepared);
  await page.goto(server.url);
  const agents = await getJson<{ agents: string[] }>(`${server.url}/api/agents`);
  // The Claude Agent SDK order desk is hosted too; its reads run inside the harness, so its Step counts differ (see its own tests).
  assert.deepEqual(agents.agents.toSorted(), ["ClaudeAgentSdkOrderDesk", "MastraOrderDesk", "OpenAiAgentsOrderDesk", "VercelAiOrderDesk"]);

  for (const agent of ["VercelAiOrderDesk", "OpenAiAgentsOrderDesk", "MastraOrderDesk"]) {
    const sessions = page.getByRole("complementary", { name: "Sessions" });
    await sessions.getByRole("combobox", { name: "Agent for new sessions" }).selectOption(agent);
    const before = page.url();
    await sessions.getByRole("button", { name: "New session" }).click();
    await page.waitForURL((url) => url.href !== before && /\/sessions\/[^/]+$/.test(url.pathname));
    const sessionId = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1) ?? "");
    await page.getByRole("heading", { name: sessionId }).waitFor();

    await send(page, "where is order 1001?");
    const turn1 = assistantMessage(page, "turn-1");
    await waitForBadge(toolCard(turn1, "lookup_order"), "done");
    await waitForText(turn1, "Order 1001 (Trail running shoes) is shipped.");

    await send(page, "please refund order 1002");
    const turn2 = assistantMessage(page, "turn-2");
    const refund = toolCard(turn2, "refund_order");
    await waitForBadge(refund, "needs approval");
    await refund.getByRole("button", { name: "Approve" }).click();
    await waitForBadge(refund, "done");
    await waitForText(turn2, "Refunded order 1002 (Rain jacket).");

    const inspection = await pollUntil(async () => {
      const inspected = await getJson<{ flowType: string; timeline: { stepType: string }[] }>(`${server.url}/api/sessions/${sessionId}/inspect`);
      return inspected.timeline.some((execution) => execution.stepType === "CallSingleAttemptTool") ? inspected : undefined;
    }, { timeoutMs: uiTimeoutMs, description: `the ${agent} session's refund Step` });
    assert.equal(inspection.flowType, agent);
    const stepTypes = inspection.timeline.map((execution) => execution.stepType);
    assert.equal(stepTypes.filter((type) => type === "CallTool").length, 1, "the lookup ran in its own Step");
    assert.equal(stepTypes.filter((type) => type === "CallSingleAttemptTool").length, 1, "the refund ran once, in its own Step");
    assert.equal(stepTypes.filter((type) => type === "RunModel").length, 4, "one RunModel per model call");
    await page.getByRole("group", { name: "Layout" }).getByRole("button", { name: "Inspector" }).click();
    await page.getByRole("tab", { name: "Timeline" }).click();
    const timeline = page.getByTestId("step-timeline");
    await timeline.locator('[data-step-type="CallSingleAttemptTool"]').first().waitFor();
    await timeline.locator('[data-step-type="CallTool"]').first().waitFor();
    await page.getByRole("group", { name: "Layout" }).getByRole("button", { name: "Chat" }).click();
  }
});
