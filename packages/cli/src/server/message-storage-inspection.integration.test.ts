/**
 * The dev server's inspection of a session's message storage, in this
 * process on a real SQLite file: `GET /api/sessions/:id/inspect` reports the
 * window and the archive chunks once a rollover wrote `AgentMessageIndex`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createAgentSessionFlow, emptyAgentUsage, type AgentFrameworkRunner, type AgentTurnContext, type AgentTurnOutcome, type DeferredToolOutcome, type FrameworkMessage } from "@perdure/agents";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore, pollUntil } from "@perdure/engine/testing";
import { createDevApp } from "./create-dev-app.ts";
import type { InspectedMessageStorage } from "@perdure/agents/http";

const token = "message-storage-test-token";

/** Answers every turn with 40 short messages, so the second turn rolls the window over. */
class FortyRepliesRunner implements AgentFrameworkRunner<DeferredToolOutcome> {
  buildUserMessage(text: string): FrameworkMessage {
    return { role: "user", text, frameworkItem: null };
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const replies = Array.from({ length: 40 }, (_unused, index) => ({ role: "assistant" as const, text: `${turn.turnId} reply ${index + 1}`, frameworkItem: null }));
    return { kind: "turn_completed", newMessages: replies, usage: emptyAgentUsage() };
  }

  async executeDeferredToolCall(): Promise<DeferredToolOutcome> {
    throw new Error("no tools");
  }
}

void test("the inspection shows the message window and the archived chunks", { timeout: 300_000 }, async (t) => {
  const flow = createAgentSessionFlow(new FortyRepliesRunner(), "StorageAgent");
  const temporary = createTemporarySqliteStore();
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
  await worker.start();
  t.after(async () => {
    await worker.close();
    await temporary.dispose();
  });
  const client = new Client({ store: temporary.store });
  const app = createDevApp({ client, flows: new Map([[flow.flowType, flow]]), access: { token, port: 4998 }, allowedHosts: ["localhost:4998"] });
  const inspect = async (): Promise<InspectedMessageStorage> => {
    const response = await app.request("http://localhost:4998/api/sessions/m1/inspect", { headers: { host: "localhost:4998", authorization: `Bearer ${token}` } });
    assert.equal(response.status, 200);
    return ((await response.json()) as { messageStorage: InspectedMessageStorage }).messageStorage;
  };
  const waitForTurns = (turns: number) => pollUntil(async () => {
    const [state] = await client.getAttributes("m1", flow.agentState);
    return state !== undefined && state.turnCount >= turns && state.activeTurnId === null ? state : undefined;
  }, { timeoutMs: 15_000, description: `turn ${turns}` });

  await client.start(flow, "m1", { initial_message: "first" });
  await waitForTurns(1);
  assert.deepEqual(await inspect(), { hasIndex: false, windowFirstSequence: 1, windowMessageCount: 41, chunks: [], deletedBeforeSequence: null });
  assert.equal(await client.invokeRPC(flow.sendUserMessage, "m1", { text: "second" }), true);
  await waitForTurns(2);
  // 82 messages: the 40 answers took the window to 82, and one chunk of 32 moved.
  assert.deepEqual(await inspect(), {
    hasIndex: true,
    windowFirstSequence: 33,
    windowMessageCount: 50,
    chunks: [{ firstSequence: 1, lastSequence: 32, messageCount: 32, isOversized: false }],
    deletedBeforeSequence: null,
  });
});
