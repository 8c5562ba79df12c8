/**
 * Tool approvals through the AI SDK chat client (`addToolApprovalResponse`
 * and `sendAutomaticallyWhen`), and through hand-made requests a browser
 * could send, over real HTTP on loopback.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { UIMessageChunk } from "ai";
import { pollUntil } from "@perdure/engine/testing";
import { resolveAgentToolApproval } from "./agent-tool-approvals.ts";
import { streamAgentUIMessageChunks } from "./agent-ui-message-stream-responses.ts";
import type { AgentUIMessageChunk } from "./agent-ui-message-types.ts";
import type { StreamingScriptInput, StreamingScriptReply, StreamingScriptedTool } from "./test-fixtures/streaming-scripted-runner.ts";
import { partsOf, plain, type TestChat } from "./test-fixtures/test-chat.ts";
import { PromiseGate, startUIStreamHarness, type UIStreamHarness } from "./test-fixtures/ui-stream-harness.ts";

const approvalId = "turn-1-call-1-0-approval";

/** Asks to refund the order named by the user, then reports the call's status and output. */
function refundThenReport(input: StreamingScriptInput): StreamingScriptReply {
  if (input.modelCall === 1) return { text: ["Refunding ", "now."], toolCalls: [{ name: "refund_order", arguments: { order_id: input.userText } }] };
  const [call] = input.previousResults;
  return { text: [`Result: ${call?.status ?? "none"}: `, call?.output ?? ""] };
}

function refundTool(runs: string[], gate?: { pass(): Promise<void> }): StreamingScriptedTool {
  return {
    effect: "non_idempotent_write",
    execute: async (args) => {
      runs.push(String(args.order_id));
      await gate?.pass();
      return `refunded ${String(args.order_id)}`;
    },
  };
}

/** Starts a session whose first turn waits for the refund's approval, through a chat. */
async function awaitingApproval(harness: UIStreamHarness, chatId: string): Promise<TestChat> {
  await harness.sessions.start(chatId);
  const chat = harness.chat(chatId);
  await chat.sendMessage({ text: "o-7" });
  await chat.waitUntilSettled();
  assert.deepEqual(chat.finishReasons, ["tool-calls"]);
  return chat;
}

function toolPartOf(chat: TestChat): Record<string, unknown> | undefined {
  return plain(chat.assistantMessage.parts.find((part) => part.type === "dynamic-tool")) as Record<string, unknown> | undefined;
}

/** POSTs an assistant message as a browser would, and reads the whole streamed answer. */
async function postAssistantMessage(harness: UIStreamHarness, chatId: string, message: unknown): Promise<UIMessageChunk[]> {
  const response = await fetch(`${harness.server.baseUrl}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id: chatId, messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "o-7" }] }, message] }),
  });
  assert.equal(response.status, 200);
  const text = await response.text();
  return text.split("\n\n").flatMap((frame) => (frame.startsWith("data: ") && frame !== "data: [DONE]" ? [JSON.parse(frame.slice(6)) as UIMessageChunk] : []));
}

function decisionPart(id: string, approved: boolean, toolCallId = "turn-1-call-1-0", reason?: string): unknown {
  return { type: "dynamic-tool", toolName: "refund_order", toolCallId, state: "approval-responded", input: {}, approval: { id, approved, ...(reason === undefined ? {} : { reason }) } };
}

async function pendingApprovalIds(harness: UIStreamHarness, chatId: string): Promise<string[]> {
  const [pending] = await harness.session.client.getAttributes(chatId, harness.flow.pendingInterrupts);
  return (pending ?? []).map((interrupt) => interrupt.interruptId);
}

describe("tool approvals over the UI message stream", () => {
  for (const withToken of [false, true]) {
    it(`an approval round trip runs the call once and streams the rest of the turn into the same message${withToken ? ", continuing after the paused stream's token" : ""}`, async () => {
      const runs: string[] = [];
      const harness = await startUIStreamHarness(refundThenReport, { refund_order: refundTool(runs) });
      try {
        const chat = await awaitingApproval(harness, "s1");
        chat.sendTokenWithApprovals = withToken;
        assert.deepEqual(toolPartOf(chat), {
          type: "dynamic-tool", toolName: "refund_order", toolCallId: "turn-1-call-1-0", state: "approval-requested", input: { order_id: "o-7" }, approval: { id: approvalId },
        });
        await chat.addToolApprovalResponse({ id: approvalId, approved: true });
        await pollUntil(async () => (chat.finishReasons.length === 2 ? true : undefined), { timeoutMs: 10_000 });
        await chat.waitUntilSettled();
        assert.deepEqual(chat.finishReasons, ["tool-calls", "stop"]);
        assert.deepEqual(runs, ["o-7"]);
        const approvalStream = partsOf(chat.responses[1]?.chunks ?? []);
        // A continuation opens with start naming the continued message, as the AI SDK's toUIMessageStream does.
        assert.deepEqual(approvalStream.slice(0, 2), [{ type: "start", messageId: "turn-1-assistant" }, { type: "tool-approval-response", approvalId, approved: true }]);
        assert.equal(approvalStream.filter((chunk) => chunk.type === "start").length, 1);
        assert.ok(!approvalStream.some((chunk) => chunk.type === "tool-input-available" || chunk.type === "tool-approval-request"), "nothing the browser holds is sent again");
        assert.deepEqual(toolPartOf(chat), {
          type: "dynamic-tool", toolName: "refund_order", toolCallId: "turn-1-call-1-0", state: "output-available",
          input: { order_id: "o-7" }, output: "refunded o-7", approval: { id: approvalId, approved: true },
        });
        // The finished turn, as GET /api/chat/:id loads it, has the same parts, the approval included.
        const stored = await harness.storedAssistantMessage("s1", "turn-1");
        assert.deepEqual(plain(chat.assistantMessage.parts), stored.parts);
        assert.equal(harness.server.served.filter((request) => request.method === "POST").length, 2);
      } finally {
        await harness.dispose();
      }
    });
  }

  it("a rejection round trip shows the denied call and the model sees the reason", async () => {
    const runs: string[] = [];
    const harness = await startUIStreamHarness(refundThenReport, { refund_order: refundTool(runs) });
    try {
      const chat = await awaitingApproval(harness, "s1");
      await chat.addToolApprovalResponse({ id: approvalId, approved: false, reason: "not allowed" });
      await pollUntil(async () => (chat.finishReasons.length === 2 ? true : undefined), { timeoutMs: 10_000 });
      await chat.waitUntilSettled();
      assert.deepEqual(chat.finishReasons, ["tool-calls", "stop"]);
      assert.deepEqual(runs, []);
      assert.deepEqual(toolPartOf(chat), {
        type: "dynamic-tool", toolName: "refund_order", toolCallId: "turn-1-call-1-0", state: "output-denied",
        input: { order_id: "o-7" }, approval: { id: approvalId, approved: false, reason: "not allowed" },
      });
      const last = chat.assistantMessage.parts.at(-1);
      assert.equal(last?.type === "text" ? last.text : undefined, "Result: rejected: The user rejected this tool call: not allowed");
    } finally {
      await harness.dispose();
    }
  });

  it("a stale approval gets the call's outcome once and is not sent again in a loop", async () => {
    const runs: string[] = [];
    const harness = await startUIStreamHarness(refundThenReport, { refund_order: refundTool(runs) }, { interruptDeadlineMs: 3_600_000 });
    try {
      const chat = await awaitingApproval(harness, "s1");
      // The approval's deadline passes now, whatever the machine's load: its Timer fires at once.
      await pollUntil(async () => ((await harness.session.client.skipTimer("s1", "deadline")) === 1 ? true : undefined), { description: "the approval's deadline Timer" });
      await harness.waitForTurnEnd("s1", 1);
      await chat.addToolApprovalResponse({ id: approvalId, approved: true });
      await pollUntil(async () => (chat.finishReasons.length === 2 ? true : undefined), { timeoutMs: 10_000 });
      await chat.waitUntilSettled();
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(chat.status, "ready");
      assert.deepEqual(chat.finishReasons, ["tool-calls", "other"]);
      assert.equal(harness.server.served.filter((request) => request.method === "POST").length, 2, "one approval request, no resend");
      assert.deepEqual(runs, []);
      const part = toolPartOf(chat);
      assert.equal(part?.state, "output-available");
      assert.equal(part?.output, "The user rejected this tool call: approval deadline passed");
    } finally {
      await harness.dispose();
    }
  });

  it("untrusted, duplicate and excess decisions: unknown IDs and malformed parts are not applied, the first decision per ID wins, and only 100 are read", async () => {
    const runs: string[] = [];
    const harness = await startUIStreamHarness(refundThenReport, { refund_order: refundTool(runs) });
    try {
      await awaitingApproval(harness, "s1");
      const untrusted = await postAssistantMessage(harness, "s1", {
        id: "turn-1-assistant", role: "assistant",
        parts: [
          decisionPart("invented-approval", true, "invented-call"),
          { type: "dynamic-tool", toolCallId: "turn-1-call-1-0", state: "approval-responded", approval: { id: approvalId, approved: "yes" } },
          { type: "text", state: "approval-responded", approval: { id: approvalId, approved: true } },
        ],
      });
      assert.deepEqual(await pendingApprovalIds(harness, "s1"), [approvalId]);
      assert.deepEqual(partsOf(untrusted), [
        { type: "start", messageId: "turn-1-assistant" },
        { type: "tool-output-error", toolCallId: "invented-call", errorText: "approval invented-approval is no longer pending, so the decision was not applied", dynamic: true },
        { type: "finish", finishReason: "tool-calls" },
      ]);

      const excess = await postAssistantMessage(harness, "s1", {
        id: "turn-1-assistant", role: "assistant",
        parts: [...Array.from({ length: 100 }, (_, index) => decisionPart(`invented-${index}`, true, `invented-call-${index}`)), decisionPart(approvalId, true)],
      });
      assert.deepEqual(await pendingApprovalIds(harness, "s1"), [approvalId], "the 101st decision is not read");
      assert.equal(partsOf(excess).filter((chunk) => chunk.type === "tool-output-error").length, 100);

      const duplicate = await postAssistantMessage(harness, "s1", {
        id: "turn-1-assistant", role: "assistant",
        parts: [decisionPart(approvalId, false, "turn-1-call-1-0", "first"), decisionPart(approvalId, true)],
      });
      assert.deepEqual(partsOf(duplicate).slice(0, 2), [{ type: "start", messageId: "turn-1-assistant" }, { type: "tool-approval-response", approvalId, approved: false, reason: "first" }]);
      assert.deepEqual(partsOf(duplicate).at(-1), { type: "finish", finishReason: "stop" });
      await harness.waitForTurnEnd("s1", 1);
      assert.deepEqual(runs, []);
    } finally {
      await harness.dispose();
    }
  });

  it("a decision bound to an older turn, as from a stale tab, is not applied to the active turn", async () => {
    const runs: string[] = [];
    const harness = await startUIStreamHarness(
      (input) => (input.turnId === "turn-1" ? { text: ["Hello."] } : refundThenReport(input)),
      { refund_order: refundTool(runs) },
    );
    try {
      await harness.sessions.start("s1", { initialMessage: "hi" });
      await harness.waitForTurnEnd("s1", 1);
      await harness.sessions.sendUserMessage("s1", "o-8");
      const [interrupt] = await harness.sessions.waitForPendingInterrupts("s1");
      assert.equal(interrupt?.interruptId, "turn-2-call-1-0-approval");
      const stale = await postAssistantMessage(harness, "s1", {
        id: "turn-1-assistant", role: "assistant", parts: [decisionPart("turn-2-call-1-0-approval", true, "turn-2-call-1-0")],
      });
      assert.deepEqual(await pendingApprovalIds(harness, "s1"), ["turn-2-call-1-0-approval"]);
      assert.deepEqual(partsOf(stale).at(-1), { type: "finish", finishReason: "other" });
      // The stale tab's message is the one the stream continues.
      assert.deepEqual(partsOf(stale).filter((chunk) => chunk.type === "start"), [{ type: "start", messageId: "turn-1-assistant" }]);
      const bound = await postAssistantMessage(harness, "s1", {
        id: "turn-2-assistant", role: "assistant", parts: [decisionPart("turn-2-call-1-0-approval", true, "turn-2-call-1-0")],
      });
      assert.deepEqual(partsOf(bound).at(-1), { type: "finish", finishReason: "stop" });
      assert.deepEqual(runs, ["o-8"]);
    } finally {
      await harness.dispose();
    }
  });

  it("a reconnect after an approval, while the approved call runs, rebuilds the message and follows the call to the end", async () => {
    const runs: string[] = [];
    const gate = new PromiseGate();
    const harness = await startUIStreamHarness(refundThenReport, { refund_order: refundTool(runs, gate) });
    try {
      const chat = await awaitingApproval(harness, "s1");
      harness.server.cutNextStream({ afterParts: 3, mode: "drop" });
      await chat.addToolApprovalResponse({ id: approvalId, approved: true });
      await gate.waitUntilReached();
      await pollUntil(async () => (chat.status === "error" ? true : undefined), { timeoutMs: 10_000 });
      assert.deepEqual(partsOf(chat.responses[1]?.chunks ?? []).map((chunk) => chunk.type), ["start", "tool-approval-response", "data-agent-event"]);
      const resumed = chat.resumeStream();
      await pollUntil(async () => (chat.status === "streaming" ? true : undefined), { timeoutMs: 10_000 });
      // The resumed stream is open before it has rebuilt the message's parts.
      await pollUntil(async () => (chat.assistantMessage.parts.some((part) => part.type === "dynamic-tool") ? true : undefined), { timeoutMs: 10_000 });
      assert.equal(toolPartOf(chat)?.state, "approval-responded");
      gate.open();
      await resumed;
      await chat.waitUntilSettled();
      assert.equal(chat.status, "ready");
      assert.deepEqual(chat.finishReasons.at(-1), "stop");
      assert.deepEqual(runs, ["o-7"]);
      assert.equal(toolPartOf(chat)?.state, "output-available");
      assert.deepEqual(chat.messages.map((message) => message.role), ["user", "assistant"]);
      const last = chat.assistantMessage.parts.at(-1);
      assert.equal(last?.type === "text" ? last.text : undefined, "Result: succeeded: refunded o-7");
    } finally {
      gate.open();
      await harness.dispose();
    }
  });

  it("with finishWhenAwaitingApproval false, one stream stays open while resolveAgentToolApproval answers from another route", async () => {
    const runs: string[] = [];
    const harness = await startUIStreamHarness(refundThenReport, { refund_order: refundTool(runs) });
    try {
      await harness.sessions.start("s1", { initialMessage: "o-9" });
      await harness.sessions.waitForState("s1", (state) => state.activeTurnId === "turn-1");
      const stream = await streamAgentUIMessageChunks({ client: harness.session.client, flow: harness.flow, flowId: "s1", finishWhenAwaitingApproval: false });
      assert.ok(stream !== null);
      const reader = stream.getReader();
      const chunks: AgentUIMessageChunk[] = [];
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        chunks.push(next.value);
        if (next.value.type === "tool-approval-request") {
          assert.equal(await resolveAgentToolApproval({ client: harness.session.client, flow: harness.flow, flowId: "s1", approvalId: next.value.approvalId, approved: true, turnId: "turn-2" }), false);
          assert.equal(await resolveAgentToolApproval({ client: harness.session.client, flow: harness.flow, flowId: "s1", approvalId: next.value.approvalId, approved: true }), true);
          assert.equal(await resolveAgentToolApproval({ client: harness.session.client, flow: harness.flow, flowId: "s1", approvalId: next.value.approvalId, approved: true }), false);
        }
      }
      const parts = chunks.filter((chunk) => chunk.type !== "data-agent-resume-token");
      assert.equal(parts.filter((chunk) => chunk.type === "finish").length, 1);
      assert.deepEqual(parts.at(-1), { type: "finish", finishReason: "stop" });
      assert.deepEqual(runs, ["o-9"]);
    } finally {
      await harness.dispose();
    }
  });
});
