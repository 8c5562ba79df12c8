/**
 * The AI SDK UI message stream through the AI SDK's own chat client and
 * `DefaultChatTransport`, over real HTTP on loopback, against a session on a
 * temporary SQLite store with an in-process Worker.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { UIMessage, UIMessageChunk } from "ai";
import { pollUntil } from "@perdure/engine/testing";
import { turnStartPosition } from "./agent-ui-stream-run.ts";
import { AgentUIStreamTokenCodec, maxAgentUIStreamTokenLength } from "./agent-ui-stream-token.ts";
import type { StreamingScriptInput, StreamingScriptReply, StreamingScriptedTool } from "./test-fixtures/streaming-scripted-runner.ts";
import { startUIStreamHarness, type PromiseGate } from "./test-fixtures/ui-stream-harness.ts";
import { partsOf, plain, type TestChat } from "./test-fixtures/test-chat.ts";

const lookupOrder: StreamingScriptedTool = {
  effect: "read",
  liveText: ["looking ", "up"],
  execute: async (args) => `order ${String(args.order_id)}: shipped`,
};

/** Two model calls: text and a read tool, then an answer; every text streams as several deltas. */
function lookupThenAnswer(input: StreamingScriptInput): StreamingScriptReply {
  if (input.modelCall === 1) return { text: ["Let ", "me ", "look."], toolCalls: [{ name: "lookup_order", arguments: { order_id: "7" } }] };
  return { text: ["Order 7 ", "has ", "shipped."] };
}

/** Every part is followed by its resume token, and only tokens follow parts. */
function assertTokenAfterEveryPart(chunks: readonly UIMessageChunk[]): void {
  assert.ok(chunks.length % 2 === 0, `an odd number of chunks: ${chunks.length}`);
  for (let index = 0; index < chunks.length; index += 2) {
    assert.notEqual(chunks[index]?.type, "data-agent-resume-token", `chunk ${index} is a token`);
    assert.equal(chunks[index + 1]?.type, "data-agent-resume-token", `chunk ${index + 1} is not a token`);
  }
}

/** The parts of a full replay of a finished turn, from a token of its stream. */
async function fullReplayParts(chat: TestChat, replay: TestChat): Promise<UIMessageChunk[]> {
  const first = chat.responses[0]?.chunks.find((chunk) => chunk.type === "data-agent-resume-token");
  replay.resumeToken = first?.type === "data-agent-resume-token" ? (first.data as string) : undefined;
  await replay.resumeStream();
  await replay.waitUntilSettled();
  return partsOf(replay.responses.at(-1)?.chunks ?? []);
}

describe("AI SDK UI message stream", () => {
  it("a streamed turn matches the stored messages, with a token after every part", async () => {
    const harness = await startUIStreamHarness(lookupThenAnswer, { lookup_order: lookupOrder });
    try {
      await harness.sessions.start("s1");
      const chat = harness.chat("s1");
      await chat.sendMessage({ text: "Where is order 7?" });
      await chat.waitUntilSettled();
      assert.equal(chat.status, "ready");
      assert.deepEqual(chat.finishReasons, ["stop"]);
      const response = chat.responses[0];
      assert.equal(response?.status, 200);
      assertTokenAfterEveryPart(response?.chunks ?? []);
      assert.deepEqual(partsOf(response?.chunks ?? []).map((chunk) => chunk.type), [
        "start", "start-step", "text-start", "text-delta", "text-delta", "text-delta", "text-end", "data-agent-event", "tool-input-available",
        "data-agent-event", "data-agent-event", "data-agent-event", "tool-output-available",
        "finish-step", "start-step", "text-start", "text-delta", "text-delta", "text-delta", "text-end", "data-agent-event", "finish-step", "finish",
      ]);
      assert.deepEqual(plain(chat.assistantMessage), await harness.storedAssistantMessage("s1", "turn-1"));
      assert.equal(chat.assistantMessage.id, "turn-1-assistant");
      // The user message keeps the ID the AI SDK client gave it, so a reload finds the same message.
      const [sentUserMessage] = chat.messages;
      assert.equal(sentUserMessage?.role, "user");
      assert.deepEqual((await harness.storedMessages("s1")).map((message) => message.id), [sentUserMessage?.id, "turn-1-assistant"]);
      assert.doesNotMatch(sentUserMessage?.id ?? "", /^message-/);
    } finally {
      await harness.dispose();
    }
  });

  /** A live turn paused before the answer's second delta, so a cut falls while it runs. */
  async function startPausedTurn(harness: Awaited<ReturnType<typeof startUIStreamHarness>>, chatId: string): Promise<{ chat: TestChat; gate: PromiseGate; sent: Promise<void> }> {
    const gate = harness.gate();
    harness.runner.onDelta = async ({ flowId, modelCall, kind, index }) => {
      if (flowId === chatId && modelCall === 2 && kind === "text" && index === 1) await gate.pass();
    };
    await harness.sessions.start(chatId);
    const chat = harness.chat(chatId);
    const sent = chat.sendMessage({ text: "Where is order 7?" });
    return { chat, gate, sent };
  }

  for (const scenario of [
    { name: "a dropped connection continues exactly, with no repeated or missing part", mode: "drop" as const, afterParts: 16, isContinuing: true },
    { name: "a cut between two parts of one event continues with the event's next part", mode: "drop" as const, afterParts: 2, isContinuing: true },
    { name: "a clean close replays the turn into the same message", mode: "close" as const, afterParts: 16, isContinuing: false },
  ]) {
    it(scenario.name, async () => {
      const harness = await startUIStreamHarness(lookupThenAnswer, { lookup_order: lookupOrder });
      try {
        harness.server.cutNextStream({ afterParts: scenario.afterParts, mode: scenario.mode });
        const { chat, gate, sent } = await startPausedTurn(harness, "s1");
        await sent;
        await gate.waitUntilReached();
        assert.equal(chat.status, scenario.mode === "drop" ? "error" : "ready");
        const beforeCut = partsOf(chat.responses[0]?.chunks ?? []);
        assert.equal(beforeCut.length, scenario.afterParts);
        gate.open();
        chat.continueOnReconnect = scenario.isContinuing;
        await chat.resumeStream();
        await chat.waitUntilSettled();
        assert.equal(chat.status, "ready");
        const afterCut = partsOf(chat.responses[1]?.chunks ?? []);
        const full = await fullReplayParts(chat, harness.chat("s1"));
        if (scenario.isContinuing) {
          assert.deepEqual([...beforeCut, ...afterCut], full);
          if (scenario.afterParts === 2) assert.deepEqual(afterCut.slice(0, 2).map((chunk) => chunk.type), ["text-start", "text-delta"]);
        } else {
          assert.deepEqual(afterCut, full);
          assert.equal(afterCut[0]?.type, "start");
        }
        assert.deepEqual(chat.messages.map((message) => message.role), ["user", "assistant"]);
        assert.deepEqual(plain(chat.assistantMessage), await harness.storedAssistantMessage("s1", "turn-1"));
        assert.deepEqual(chat.finishReasons.at(-1), "stop");
      } finally {
        await harness.dispose();
      }
    });
  }

  it("a turn_completed or turn_failed that never commits is not an end: the retry resets the step and the turn ends once", async () => {
    const harness = await startUIStreamHarness((input) => ({
      text: input.attempt === 1 ? ["First ", "try"] : ["Second ", "try"],
      failAfterWritingOnAttempt: { attempt: 1, event: input.userText === "one" ? "turn_completed" : "turn_failed" },
    }));
    try {
      await harness.sessions.start("s1");
      const chat = harness.chat("s1");
      for (const [turn, text] of ["one", "two"].entries()) {
        await chat.sendMessage({ text });
        await chat.waitUntilSettled();
        assert.equal(chat.status, "ready");
        const parts = partsOf(chat.responses[turn]?.chunks ?? []);
        assert.deepEqual(parts.map((chunk) => chunk.type), [
          "start", "start-step", "text-start", "text-delta", "text-delta",
          "reset-step", "text-start", "text-delta", "text-delta", "text-end", "data-agent-event", "finish-step", "finish",
        ]);
        assert.deepEqual(parts.at(-1), { type: "finish", finishReason: "stop" });
        assert.deepEqual(plain(chat.assistantMessage), await harness.storedAssistantMessage("s1", `turn-${turn + 1}`));
        assert.deepEqual(chat.assistantMessage.parts, [{ type: "step-start" }, { type: "text", text: "Second try", state: "done", providerMetadata: undefined }]);
      }
      assert.deepEqual(chat.finishReasons, ["stop", "stop"]);
    } finally {
      await harness.dispose();
    }
  });

  it("a turn that fails for good ends with an error part and finish reason error once its failure committed", async () => {
    const harness = await startUIStreamHarness((input) => ({ text: [`attempt ${input.attempt}`], failOnAttempts: [1, 2, 3] }));
    try {
      await harness.sessions.start("s1");
      const errors: Error[] = [];
      const chat = harness.chat("s1", { onError: (error) => errors.push(error) });
      await chat.sendMessage({ text: "fail" });
      await chat.waitUntilSettled();
      const parts = partsOf(chat.responses[0]?.chunks ?? []);
      assert.deepEqual(parts.slice(-4).map((chunk) => chunk.type), ["text-end", "finish-step", "error", "finish"]);
      assert.deepEqual(parts.at(-1), { type: "finish", finishReason: "error" });
      assert.deepEqual(parts.filter((chunk) => chunk.type === "reset-step").length, 2);
      // The AI SDK client turns an error part into a failed request.
      assert.equal(chat.status, "error");
      assert.match(errors[0]?.message ?? "", /model call attempt 3 failed/);
      const [state] = await harness.session.client.getAttributes("s1", harness.flow.agentState);
      assert.match(state?.lastTurnError ?? "", /model call attempt 3 failed/);
    } finally {
      await harness.dispose();
    }
  });

  it("a page reload replays the active turn into its stored message, also from a forged or rejected position", async () => {
    const harness = await startUIStreamHarness(lookupThenAnswer, { lookup_order: lookupOrder });
    try {
      const { gate, chat: sender } = await startPausedTurn(harness, "s1");
      await gate.waitUntilReached();
      const userMessageId = sender.messages[0]?.id ?? "";
      const loaded = (await (await fetch(`${harness.server.baseUrl}/api/chat/s1`)).json()) as { messages: UIMessage[]; resumeToken: string | null };
      assert.deepEqual(loaded.messages.map((message) => message.id), [userMessageId, "turn-1-assistant"]);
      assert.notEqual(loaded.resumeToken, null);
      const token = loaded.resumeToken ?? "";
      const forged = `${token.slice(0, -2)}${token.endsWith("AA") ? "BB" : "AA"}`;
      await harness.sessions.start("other");
      const other = await harness.chat("other").sendMessage({ text: "hello" }).then(() => harness.sessions.readEvents("other"));
      const foreignEngineToken = (await harness.session.client.readStream("other", harness.flow.agentEvents, { limit: 1 })).messages[0]?.token ?? "";
      assert.ok(other.length > 0 && foreignEngineToken !== "");
      const codec = await AgentUIStreamTokenCodec.forStore(harness.session.client.store);
      const rejectedPosition = codec.encode("s1", { ...turnStartPosition("turn-1", foreignEngineToken), partsSent: 0 });
      const reloads = [token, forged, rejectedPosition].map((resumeToken) => harness.chat("s1", { messages: loaded.messages, resumeToken }));
      const resumed = reloads.map((chat) => chat.resumeStream());
      await pollUntil(async () => (reloads.every((chat) => chat.status === "streaming") ? true : undefined), { timeoutMs: 10_000 });
      gate.open();
      await Promise.all(resumed);
      const stored = await harness.storedAssistantMessage("s1", "turn-1");
      for (const chat of reloads) {
        await chat.waitUntilSettled();
        assert.equal(chat.status, "ready");
        assert.equal(chat.responses[0]?.status, 200);
        assert.equal(partsOf(chat.responses[0]?.chunks ?? [])[0]?.type, "start");
        assert.deepEqual(chat.messages.map((message) => message.id), [userMessageId, "turn-1-assistant"]);
        assert.deepEqual(plain(chat.assistantMessage), stored);
      }
      const idle = await (await fetch(`${harness.server.baseUrl}/api/chat/s1`)).json() as { resumeToken: string | null };
      assert.equal(idle.resumeToken, null);
      const noTurn = await fetch(`${harness.server.baseUrl}/api/chat/s1/stream`);
      assert.equal(noTurn.status, 204);
    } finally {
      await harness.dispose();
    }
  });

  it("a token over 64 KiB is rejected unread: the stream replays the active turn instead", async () => {
    const harness = await startUIStreamHarness(lookupThenAnswer, { lookup_order: lookupOrder });
    try {
      const { gate } = await startPausedTurn(harness, "s1");
      await gate.waitUntilReached();
      const chat = harness.chat("s1", { resumeToken: `u1.${"A".repeat(maxAgentUIStreamTokenLength)}.x` });
      const resumed = chat.resumeStream();
      await pollUntil(async () => (chat.status === "streaming" ? true : undefined), { timeoutMs: 10_000 });
      gate.open();
      await resumed;
      await chat.waitUntilSettled();
      assert.equal(partsOf(chat.responses[0]?.chunks ?? [])[0]?.type, "start");
      assert.deepEqual(plain(chat.assistantMessage), await harness.storedAssistantMessage("s1", "turn-1"));
      for (const chunk of chat.responses[0]?.chunks ?? []) {
        if (chunk.type === "data-agent-resume-token") assert.ok((chunk.data as string).length <= maxAgentUIStreamTokenLength);
      }
    } finally {
      await harness.dispose();
    }
  });

  it("reasoning streams as reasoning parts before the text", async () => {
    const harness = await startUIStreamHarness(() => ({ reasoning: ["Think", "ing"], text: ["Done", "."] }));
    try {
      await harness.sessions.start("s1");
      const chat = harness.chat("s1");
      await chat.sendMessage({ text: "go" });
      await chat.waitUntilSettled();
      assert.deepEqual(plain(chat.assistantMessage.parts), [
        { type: "step-start" },
        { type: "reasoning", id: "reasoning-0", text: "Thinking", state: "done" },
        { type: "text", text: "Done.", state: "done" },
      ]);
    } finally {
      await harness.dispose();
    }
  });

  it("with Streams unavailable, committed state finishes the turn: its approvals with tool-calls, its end with other", async () => {
    const refund: StreamingScriptedTool = { effect: "non_idempotent_write", execute: async () => "refunded" };
    const harness = await startUIStreamHarness(
      (input) => (input.modelCall === 1 ? { text: ["Refunding."], toolCalls: [{ name: "refund_order", arguments: { order_id: "7" } }] } : { text: ["Done."] }),
      { refund_order: refund },
      { eventStreamCapacityBytes: 1 },
    );
    try {
      await harness.sessions.start("s1");
      const chat = harness.chat("s1");
      await chat.sendMessage({ text: "Refund order 7" });
      await chat.waitUntilSettled();
      assert.deepEqual(chat.finishReasons, ["tool-calls"]);
      assert.deepEqual(partsOf(chat.responses[0]?.chunks ?? []).map((chunk) => chunk.type), ["start", "tool-input-available", "tool-approval-request", "finish"]);
      const [part] = chat.assistantMessage.parts;
      assert.equal(part?.type === "dynamic-tool" ? part.state : undefined, "approval-requested");
      const loaded = (await (await fetch(`${harness.server.baseUrl}/api/chat/s1`)).json()) as { messages: UIMessage[]; resumeToken: string | null };
      assert.equal(loaded.resumeToken, null);
      const toolPart = loaded.messages.at(-1)?.parts.find((candidate) => candidate.type === "dynamic-tool");
      assert.deepEqual(plain(toolPart), {
        type: "dynamic-tool", toolCallId: "turn-1-call-1-0", toolName: "refund_order", state: "approval-requested",
        input: { order_id: "7" }, approval: { id: "turn-1-call-1-0-approval" },
      });
      await chat.addToolApprovalResponse({ id: "turn-1-call-1-0-approval", approved: true });
      await pollUntil(async () => (chat.finishReasons.length === 2 ? true : undefined), { timeoutMs: 10_000 });
      await chat.waitUntilSettled();
      assert.deepEqual(chat.finishReasons, ["tool-calls", "other"]);
      const answered = chat.assistantMessage.parts.find((candidate) => candidate.type === "dynamic-tool");
      assert.deepEqual([answered?.type === "dynamic-tool" ? answered.state : undefined, answered?.type === "dynamic-tool" ? answered.output : undefined], ["output-available", "refunded"]);
      await harness.waitForTurnEnd("s1", 1);
      const stored = await harness.storedAssistantMessage("s1", "turn-1");
      assert.deepEqual(stored.parts.at(-1), { type: "text", text: "Done.", state: "done" });
    } finally {
      await harness.dispose();
    }
  });
});

describe("user message IDs", () => {
  it("a client's message ID is kept, a repeated one falls back to message-<sequence>, and an invalid one is refused with 400", async () => {
    const harness = await startUIStreamHarness(() => ({ text: ["ok"] }));
    try {
      await harness.sessions.start("ids");
      const post = (id: unknown) => fetch(`${harness.server.baseUrl}/api/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: "ids", messages: [{ id, role: "user", parts: [{ type: "text", text: `hello ${String(id)}` }] }] }),
      });
      for (const [index, id] of ["client-a", "client-b", "client-a"].entries()) {
        const response = await post(id);
        assert.equal(response.status, 200);
        await response.text();
        await harness.waitForTurnEnd("ids", index + 1);
      }
      for (const invalid of ["", "x".repeat(129), "line\nbreak", 42]) {
        const refused = await post(invalid);
        assert.equal(refused.status, 400, String(invalid));
        assert.match(await refused.text(), /message id .* is invalid: use 1 to 128 characters without control characters/);
      }
      const userIds = (await harness.storedMessages("ids")).filter((message) => message.role === "user").map((message) => message.id);
      assert.deepEqual(userIds, ["client-a", "client-b", "message-5"]);
      assert.equal((await harness.sessions.getAgentSnapshot("ids")).state?.turnCount, 3, "a refused message started no turn");
    } finally {
      await harness.dispose();
    }
  });
});
