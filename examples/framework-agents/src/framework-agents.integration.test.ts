/**
 * The example agents on a real engine: a lookup answered from its tool, a
 * refund that waits for approval and then runs once under the call's key.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { AgentSessionFlow } from "@perdure/agents";
import { AgentSessionTestClient, AgentTestEnvironment, PrivateEngine } from "@perdure/agents/testing";

// The notes server's file, set before the agents list its tools.
const notesFolder = mkdtempSync(join(tmpdir(), "perdure-framework-notes-"));
after(() => rmSync(notesFolder, { recursive: true, force: true }));
process.env.PERDURE_NOTES_FILE = join(notesFolder, "notes.json");
const { openAiOrderDeskFlow } = await import("./openai-agents-agent.ts");
const { vercelAiOrderDeskFlow } = await import("./vercel-ai-agent.ts");
const { mastraOrderDeskFlow } = await import("./mastra-agent.ts");
const { claudeOrderDeskFlow } = await import("./claude-agent-sdk-agent.ts");

// The Claude Agent SDK starts a Claude Code process for every model call, which takes
// tens of seconds on a loaded two-core machine; nothing here asserts how long a turn takes.
const waitMs = 120_000;

for (const [framework, flow] of [["AI SDK", vercelAiOrderDeskFlow], ["OpenAI Agents SDK", openAiOrderDeskFlow], ["Mastra", mastraOrderDeskFlow], ["Claude Agent SDK", claudeOrderDeskFlow]] as [string, AgentSessionFlow][]) {
  void test(`the ${framework} order desk looks up an order, refunds one only after approval, and reads the notes MCP server through its tools`, async (t) => {
    const engine = await PrivateEngine.start();
    const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow], workerOptions: { pollIntervalMs: 20 } });
    t.after(async () => {
      await environment.close();
      await engine.stop();
    });
    const sessions = new AgentSessionTestClient(environment.client, flow);
    const sessionId = `desk-${flow.flowType}`;
    await sessions.startSession(sessionId, { initialMessage: "Where is order 1001?" });
    await sessions.waitForTurnCount(sessionId, 1, { timeoutMs: waitMs });
    assert.equal((await sessions.getAgentSnapshot(sessionId)).messages.at(-1)?.text, "Order 1001 (Trail running shoes) is shipped.");

    assert.equal(await sessions.sendUserMessage(sessionId, "Please refund order 1002."), true);
    const [interrupt] = await sessions.waitForPendingInterrupts(sessionId, 1, { timeoutMs: waitMs });
    assert.equal(interrupt?.toolName, "refund_order");
    assert.equal(await sessions.resolveInterrupt(sessionId, { interruptId: interrupt.interruptId, approved: true }), true);
    const state = await sessions.waitForTurnCount(sessionId, 2, { timeoutMs: waitMs });
    assert.equal(state.lastTurnError, null);
    assert.equal((await sessions.getAgentSnapshot(sessionId)).messages.at(-1)?.text, "Refunded order 1002 (Rain jacket).");

    // The contract's MCP recipe: the notes server's tool wrapped as the framework's own tool.
    assert.equal(await sessions.sendUserMessage(sessionId, "What do our notes say?"), true);
    const third = await sessions.waitForTurnCount(sessionId, 3, { timeoutMs: waitMs });
    assert.equal(third.lastTurnError, null);
    const snapshot = await sessions.getAgentSnapshot(sessionId);
    const listed = snapshot.messages.find((message) => message.role === "tool" && message.toolName === "notes__list_notes");
    assert.ok(listed !== undefined, "the notes tool result is stored");
    assert.match(listed.text, /returns/);
    assert.equal(snapshot.messages.at(-1)?.text, listed.text, "the answer is the notes tool's output");
  });
}
