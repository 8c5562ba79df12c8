/**
 * Questions, durable waits and plans through the AI SDK chat client over
 * real HTTP on loopback: an `ask_user` question answered and declined by
 * setting `response` on its part and sending the message back, a refused
 * answer, a late answer from a stale tab, a reloaded page's question part,
 * a durable wait's timer part, a plan part, and the same events on plain
 * Server-Sent Events.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { UIMessage } from "ai";
import { pollUntil } from "@perdure/engine/testing";
import { durableWaitTimerId } from "../session/built-in-tools/durable-wait-timer.ts";
import { answerAgentQuestion } from "./agent-question-responses.ts";
import type { AgentQuestionData } from "../contract/ui-stream/data-parts.ts";
import type { StreamingScriptInput, StreamingScriptReply } from "./test-fixtures/streaming-scripted-runner.ts";
import { partsOf, plain, type TestChat } from "./test-fixtures/test-chat.ts";
import { startUIStreamHarness, type UIStreamHarness } from "./test-fixtures/ui-stream-harness.ts";

const askId = "turn-1-call-1-0";

/** Asks which size, then reports what the ask_user call returned. */
function askThenReport(input: StreamingScriptInput): StreamingScriptReply {
  if (input.modelCall === 1) {
    return { text: ["Let me ", "ask."], toolCalls: [{ name: "ask_user", arguments: { question: "Which size?", choices: ["S", "M", "L"], allows_free_text: false } }] };
  }
  const [call] = input.previousResults;
  return { text: [`Got ${call?.status ?? "none"}: `, call?.output ?? ""] };
}

async function awaitingQuestion(harness: UIStreamHarness, chatId: string): Promise<TestChat> {
  await harness.sessions.start(chatId);
  const chat = harness.chat(chatId);
  await chat.sendMessage({ text: "a shirt" });
  await chat.waitUntilSettled();
  assert.deepEqual(chat.finishReasons, ["tool-calls"], "the stream pauses while the turn waits only for the answer");
  return chat;
}

function questionPartOf(message: UIMessage | undefined, interruptId = askId): { type: string; id?: string; data: AgentQuestionData } | undefined {
  return plain(message?.parts.find((part) => part.type === "data-agent-question" && "id" in part && part.id === interruptId)) as { type: string; id?: string; data: AgentQuestionData } | undefined;
}

/** What a browser does to answer: set `response` on the question part, then send the message back. */
async function respond(chat: TestChat, interruptId: string, response: AgentQuestionData["response"]): Promise<void> {
  chat.messages = chat.messages.map((message) => ({
    ...message,
    parts: message.parts.map((part) => (part.type === "data-agent-question" && "id" in part && part.id === interruptId
      ? { ...part, data: { ...(part.data as AgentQuestionData), response } }
      : part)),
  }));
  await chat.sendMessage();
}

function lastText(chat: TestChat): string | undefined {
  const last = chat.assistantMessage.parts.at(-1);
  return last?.type === "text" ? last.text : undefined;
}

describe("questions over the UI message stream", () => {
  it("an ask_user question shows as the call's tool part and a question part; the answer sent back in the message resumes the turn in the same message", async () => {
    const harness = await startUIStreamHarness(askThenReport, {}, { builtInTools: ["ask_user"] });
    try {
      const chat = await awaitingQuestion(harness, "s1");
      const toolPart = plain(chat.assistantMessage.parts.find((part) => part.type === "dynamic-tool"));
      assert.deepEqual(toolPart, { type: "dynamic-tool", toolName: "ask_user", toolCallId: askId, state: "input-available", input: { question: "Which size?", choices: ["S", "M", "L"], allows_free_text: false } });
      assert.deepEqual(questionPartOf(chat.assistantMessage), {
        type: "data-agent-question",
        id: askId,
        data: { interruptId: askId, toolCallId: askId, toolName: "ask_user", question: "Which size?", choices: ["S", "M", "L"], allowsFreeText: false, deadline: null },
      });
      await respond(chat, askId, { answer: "M" });
      await pollUntil(async () => (chat.finishReasons.length === 2 ? true : undefined), { timeoutMs: 10_000 });
      await chat.waitUntilSettled();
      assert.deepEqual(chat.finishReasons, ["tool-calls", "stop"]);
      const answerStream = partsOf(chat.responses[1]?.chunks ?? []);
      // The continuation opens with start naming the continued message, as the AI SDK's toUIMessageStream does.
      assert.deepEqual(answerStream.slice(0, 2), [{ type: "start", messageId: "turn-1-assistant" }, {
        type: "data-agent-question-resolution",
        id: askId,
        data: { interruptId: askId, toolCallId: askId, resolution: "answered", rejectionMessage: null, cancellationReason: null },
      }]);
      assert.ok(!answerStream.slice(1).some((chunk) => chunk.type === "start" || chunk.type === "data-agent-question"), "nothing the browser holds is sent again");
      assert.equal(lastText(chat), 'Got succeeded: {"status":"answered","answer":"M"}');
      assert.equal(chat.messages.filter((message) => message.role === "assistant").length, 1);
      assert.equal(harness.server.served.filter((request) => request.method === "POST").length, 2);
    } finally {
      await harness.dispose();
    }
  });

  it("a decline sent back in the message reaches the model as the decline's message", async () => {
    const harness = await startUIStreamHarness(askThenReport, {}, { builtInTools: ["ask_user"] });
    try {
      const chat = await awaitingQuestion(harness, "s1");
      await respond(chat, askId, { declined: true, reason: "ask me later" });
      await pollUntil(async () => (chat.finishReasons.length === 2 ? true : undefined), { timeoutMs: 10_000 });
      await chat.waitUntilSettled();
      const resolution = chat.assistantMessage.parts.find((part) => part.type === "data-agent-question-resolution");
      assert.deepEqual(plain(resolution && "data" in resolution ? resolution.data : undefined), { interruptId: askId, toolCallId: askId, resolution: "declined", rejectionMessage: "ask me later", cancellationReason: null });
      assert.equal(lastText(chat), "Got rejected: ask me later", "the model sees the decline's message as the call's result");
    } finally {
      await harness.dispose();
    }
  });

  it("an answer outside the choices is refused: the question comes back with the reason and stays pending", async () => {
    const harness = await startUIStreamHarness(askThenReport, {}, { builtInTools: ["ask_user"] });
    try {
      const chat = await awaitingQuestion(harness, "s1");
      await respond(chat, askId, { answer: "XXL" });
      await pollUntil(async () => (chat.finishReasons.length === 2 ? true : undefined), { timeoutMs: 10_000 });
      await chat.waitUntilSettled();
      assert.deepEqual(chat.finishReasons, ["tool-calls", "tool-calls"]);
      const question = questionPartOf(chat.assistantMessage);
      assert.equal(question?.data.error, "the answer must be one of: S, M, L");
      assert.equal(question?.data.response, undefined, "the stream's part replaced the browser's response");
      const [pending] = await harness.session.client.getAttributes("s1", harness.flow.pendingInterrupts);
      assert.deepEqual((pending ?? []).map((interrupt) => interrupt.interruptId), [askId]);
      // The browser answers again, within the choices.
      await respond(chat, askId, { answer: "L" });
      await pollUntil(async () => (chat.finishReasons.length === 3 ? true : undefined), { timeoutMs: 10_000 });
      assert.equal(chat.finishReasons.at(-1), "stop");
      assert.equal(lastText(chat), 'Got succeeded: {"status":"answered","answer":"L"}');
    } finally {
      await harness.dispose();
    }
  });

  it("a late answer from a stale tab is not applied and gets the question's resolution", async () => {
    const harness = await startUIStreamHarness(askThenReport, {}, { builtInTools: ["ask_user"] });
    try {
      const chat = await awaitingQuestion(harness, "s1");
      assert.equal(await answerAgentQuestion({ client: harness.session.client, flow: harness.flow, flowId: "s1", interruptId: askId, answer: "S" }), true);
      await harness.waitForTurnEnd("s1", 1);
      await respond(chat, askId, { answer: "M" });
      await pollUntil(async () => (chat.finishReasons.length === 2 ? true : undefined), { timeoutMs: 10_000 });
      await chat.waitUntilSettled();
      assert.deepEqual(chat.finishReasons, ["tool-calls", "other"]);
      const late = partsOf(chat.responses[1]?.chunks ?? []);
      assert.deepEqual(late.slice(0, 2).map((chunk) => chunk.type), ["start", "data-agent-question-resolution"]);
      const stored = await harness.storedAssistantMessage("s1", "turn-1");
      const storedText = stored.parts.at(-1);
      assert.equal(storedText?.type === "text" ? storedText.text : undefined, 'Got succeeded: {"status":"answered","answer":"S"}', "the first answer counts, the stale one not at all");
      assert.equal(await answerAgentQuestion({ client: harness.session.client, flow: harness.flow, flowId: "s1", interruptId: askId, answer: "M" }), false);
    } finally {
      await harness.dispose();
    }
  });

  it("a page loaded while the question waits gets its question part from the snapshot, and a reconnect replays it", async () => {
    const harness = await startUIStreamHarness(askThenReport, {}, { builtInTools: ["ask_user"] });
    try {
      await awaitingQuestion(harness, "s1");
      const loaded = await (await fetch(`${harness.server.baseUrl}/api/chat/s1`)).json() as { messages: UIMessage[]; resumeToken: string | null };
      assert.deepEqual(questionPartOf(loaded.messages.at(-1))?.data.question, "Which size?");
      assert.notEqual(loaded.resumeToken, null);
      const reloaded = harness.chat("s1", { messages: loaded.messages, resumeToken: loaded.resumeToken });
      await reloaded.resumeStream();
      await reloaded.waitUntilSettled();
      assert.deepEqual(reloaded.finishReasons, ["tool-calls"]);
      assert.equal(reloaded.assistantMessage.parts.filter((part) => part.type === "data-agent-question").length, 1, "the replay rebuilt the one question part");
      await respond(reloaded, askId, { answer: "S" });
      await pollUntil(async () => (reloaded.finishReasons.length === 2 ? true : undefined), { timeoutMs: 10_000 });
      assert.equal(reloaded.finishReasons.at(-1), "stop");
    } finally {
      await harness.dispose();
    }
  });

  it("plain Server-Sent Events carry the question's raised and resolved events with their wire payloads", async () => {
    const harness = await startUIStreamHarness(askThenReport, {}, { builtInTools: ["ask_user"] });
    try {
      await awaitingQuestion(harness, "s1");
      const snapshot = await (await fetch(`${harness.server.baseUrl}/sessions/s1/snapshot`)).json() as { resume_token: string; pending_interrupts: { interrupt_id: string; question?: string; choices?: string[] }[] };
      assert.deepEqual(snapshot.pending_interrupts.map((interrupt) => [interrupt.interrupt_id, interrupt.question, interrupt.choices]), [[askId, "Which size?", ["S", "M", "L"]]]);
      assert.equal(await answerAgentQuestion({ client: harness.session.client, flow: harness.flow, flowId: "s1", interruptId: askId, answer: "M" }), true);
      await harness.waitForTurnEnd("s1", 1);
      const controller = new AbortController();
      const response = await fetch(`${harness.server.baseUrl}/sessions/s1/events?resumeToken=${encodeURIComponent(snapshot.resume_token)}`, { signal: controller.signal });
      const reader = (response.body ?? new ReadableStream()).getReader();
      let text = "";
      const decoder = new TextDecoder();
      while (!text.includes('"turn_completed"')) {
        const next = await reader.read();
        if (next.done) break;
        text += decoder.decode(next.value, { stream: true });
      }
      controller.abort();
      const events = text.split("\n\n").flatMap((frame) => frame.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)) as { type: string; payload: string }));
      const raised = events.find((event) => event.type === "interrupt_raised");
      const resolved = events.find((event) => event.type === "interrupt_resolved");
      assert.deepEqual(JSON.parse(raised?.payload ?? "{}"), { interrupt_id: askId, kind: "question", tool_call_id: askId, tool_name: "ask_user", deadline: null, question: "Which size?", choices: ["S", "M", "L"], allows_free_text: false });
      assert.equal((JSON.parse(resolved?.payload ?? "{}") as { answered?: boolean }).answered, true);
    } finally {
      await harness.dispose();
    }
  });
});

describe("questions a tool asks, over the UI message stream", () => {
  it("two tools asking at once show a question part on each running call; both answers sent in one message reach their tools", async () => {
    const runs: string[] = [];
    const seatTool = {
      effect: "non_idempotent_write" as const,
      requiresApproval: false,
      execute: async (args: Record<string, unknown>, call: { inputAnswers?: { answer: string | null }[] }) => {
        const answer = call.inputAnswers?.at(-1)?.answer;
        if (answer === undefined || answer === null) return { kind: "tool_input_requested" as const, question: `Seat for ${String(args.passenger)}?`, choices: ["window", "aisle"] };
        runs.push(`${String(args.passenger)}:${answer}`);
        return `booked ${String(args.passenger)} by the ${answer}`;
      },
    };
    const harness = await startUIStreamHarness((input) => (input.modelCall === 1
      ? { toolCalls: [{ name: "book_seat", arguments: { passenger: "Ada" } }, { name: "book_seat", arguments: { passenger: "Bo" } }] }
      : { text: [input.previousResults.map((call) => call.output ?? "").join("; ")] }), { book_seat: seatTool });
    try {
      await harness.sessions.start("s1");
      const chat = harness.chat("s1");
      await chat.sendMessage({ text: "book us" });
      await chat.waitUntilSettled();
      assert.deepEqual(chat.finishReasons, ["tool-calls"]);
      const first = questionPartOf(chat.assistantMessage, "turn-1-call-1-0-input-1");
      const second = questionPartOf(chat.assistantMessage, "turn-1-call-1-1-input-1");
      assert.deepEqual(first?.data, { interruptId: "turn-1-call-1-0-input-1", toolCallId: "turn-1-call-1-0", toolName: "book_seat", question: "Seat for Ada?", choices: ["window", "aisle"], allowsFreeText: false, deadline: null });
      assert.equal(second?.data.question, "Seat for Bo?");
      const states = chat.assistantMessage.parts.flatMap((part) => (part.type === "dynamic-tool" ? [`${part.toolCallId}:${part.state}`] : []));
      assert.deepEqual(states, ["turn-1-call-1-0:input-available", "turn-1-call-1-1:input-available"]);
      assert.deepEqual(runs, []);
      chat.messages = chat.messages.map((message) => ({
        ...message,
        parts: message.parts.map((part) => (part.type === "data-agent-question"
          ? { ...part, data: { ...(part.data as AgentQuestionData), response: { answer: (part.data as AgentQuestionData).question.includes("Ada") ? "window" : "aisle" } } }
          : part)),
      }));
      await chat.sendMessage();
      await pollUntil(async () => (chat.finishReasons.length === 2 ? true : undefined), { timeoutMs: 10_000 });
      await chat.waitUntilSettled();
      assert.deepEqual(chat.finishReasons, ["tool-calls", "stop"]);
      assert.deepEqual(runs.toSorted(), ["Ada:window", "Bo:aisle"]);
      const resolutions = chat.assistantMessage.parts.flatMap((part) => (part.type === "data-agent-question-resolution" && "id" in part ? [`${String(part.id)}:${(part.data as { resolution: string }).resolution}`] : []));
      assert.deepEqual(resolutions.toSorted(), ["turn-1-call-1-0-input-1:answered", "turn-1-call-1-1-input-1:answered"]);
      assert.equal(lastText(chat), "booked Ada by the window; booked Bo by the aisle");
    } finally {
      await harness.dispose();
    }
  });
});

describe("durable waits and plans over the UI message stream", () => {
  it("a durable wait shows a timer part with its due time, and the stream follows it to the turn's end", async () => {
    const harness = await startUIStreamHarness((input) => (input.modelCall === 1
      ? { toolCalls: [{ name: "durable_wait", arguments: { duration_seconds: 86_400, reason: "the carrier updates overnight" } }] }
      : { text: [`Waited: ${input.previousResults[0]?.output ?? ""}`] }), {}, { builtInTools: ["durable_wait"] });
    try {
      await harness.sessions.start("s1");
      const chat = harness.chat("s1");
      const sentAt = Date.now();
      const sending = chat.sendMessage({ text: "check tomorrow" });
      await pollUntil(async () => (chat.messages.at(-1)?.parts.some((part) => part.type === "data-agent-timer") === true ? true : undefined), { timeoutMs: 10_000, description: "the timer part" });
      const timer = chat.assistantMessage.parts.find((part) => part.type === "data-agent-timer");
      const data = plain(timer && "data" in timer ? timer.data : undefined) as { toolCallId: string; waitUntil: string; reason: string } | undefined;
      assert.equal(data?.toolCallId, "turn-1-call-1-0");
      assert.equal(data?.reason, "the carrier updates overnight");
      const dueIn = Date.parse(data?.waitUntil ?? "") - sentAt;
      assert.ok(dueIn > 86_000_000 && dueIn < 86_500_000, `the wait ends a day after the message, not in ${dueIn} ms`);
      assert.equal(chat.status, "streaming", "a durable wait is no person: the stream keeps reading");
      const snapshot = await (await fetch(`${harness.server.baseUrl}/sessions/s1/snapshot`)).json() as { tool_calls: { tool_call_id: string; status: string; wait_until?: string }[] };
      assert.deepEqual(snapshot.tool_calls.map((call) => [call.tool_call_id, call.status, call.wait_until]), [["turn-1-call-1-0", "waiting_for_timer", data?.waitUntil]], "plain SSE clients read the wait from the snapshot JSON");
      assert.equal(await harness.session.client.skipTimer("s1", durableWaitTimerId("turn-1-call-1-0")), 1);
      await sending;
      await chat.waitUntilSettled();
      assert.deepEqual(chat.finishReasons, ["stop"]);
      assert.match(lastText(chat) ?? "", /^Waited: \{"status":"completed","waited_seconds":86400,"reason":"the carrier updates overnight"\}$/);
    } finally {
      await harness.dispose();
    }
  });

  it("write_todos shows a plan part with the committed tasks", async () => {
    const todos = [{ content: "Look up the order", status: "completed" }, { content: "Refund it", status: "in_progress" }];
    const harness = await startUIStreamHarness((input) => (input.modelCall === 1 ? { toolCalls: [{ name: "write_todos", arguments: { todos } }] } : { text: ["Planned."] }), {}, { builtInTools: ["write_todos"] });
    try {
      await harness.sessions.start("s1");
      const chat = harness.chat("s1");
      await chat.sendMessage({ text: "refund order 7" });
      await chat.waitUntilSettled();
      assert.deepEqual(chat.finishReasons, ["stop"]);
      const plan = chat.assistantMessage.parts.find((part) => part.type === "data-agent-plan");
      assert.deepEqual(plain(plan), { type: "data-agent-plan", id: "agent-plan", data: { revision: 1, status: "active", taskCount: 2, tasks: todos } });
      const snapshot = await (await fetch(`${harness.server.baseUrl}/sessions/s1/snapshot`)).json() as { plan: { revision: number; status: string; tasks: unknown[] } | null };
      assert.deepEqual([snapshot.plan?.revision, snapshot.plan?.status, snapshot.plan?.tasks], [1, "active", todos], "plain SSE clients read the plan from the snapshot JSON");
    } finally {
      await harness.dispose();
    }
  });
});
