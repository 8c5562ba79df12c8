/**
 * Questions and durable waits in stored snapshots, the browser's question
 * responses, and the parts that tell a browser how a late answer's question
 * ended. docs/decisions/2026-12-03-questions-and-plans-in-ui-streams.md
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentInterrupt } from "../contract/values/agent-interrupt.ts";
import type { AgentSnapshot } from "../contract/values/agent-snapshot.ts";
import type { AgentToolCallRecord } from "../contract/values/agent-tool-call.ts";
import { emptyAgentUsage } from "../contract/values/agent-usage.ts";
import { maxAgentQuestionResponses, readAgentQuestionResponses, selectAgentQuestionResponses } from "./agent-question-responses.ts";
import { convertAgentSnapshotToUIMessages } from "./agent-ui-messages.ts";
import { planChunk } from "./plan-chunks.ts";
import { questionOutcomeChunk } from "./question-outcome-chunks.ts";

function record(toolCallId: string, toolName: string, status: AgentToolCallRecord["status"], argumentsText: string, extra: Partial<AgentToolCallRecord> = {}): AgentToolCallRecord {
  return {
    toolCallId, toolName, arguments: argumentsText, effect: "read", requiresApproval: false,
    status, output: null, error: null, turnId: "turn-2", deferralOrder: Number(toolCallId.slice(1)), ...extra,
  };
}

function question(interruptId: string, toolCallId: string, toolName: string, extra: Partial<AgentInterrupt> = {}): AgentInterrupt {
  return { interruptId, kind: "question", toolCallId, toolName, arguments: "{}", turnId: "turn-2", deadline: null, createdAt: "", ...extra };
}

function snapshot(toolCalls: AgentToolCallRecord[], pendingInterrupts: AgentInterrupt[]): AgentSnapshot {
  return {
    state: { status: "running_tools", activeTurnId: "turn-2", turnCount: 2, messageCount: 1, lastTurnError: null, createdAt: "", updatedAt: "" },
    messages: [{ sequence: 1, role: "user", text: "Book it", turnId: "turn-2", createdAt: "", frameworkItem: null }],
    pendingInterrupts,
    toolCalls,
    usage: emptyAgentUsage(),
    queuedMessageCount: 0,
    plan: null,
    queuedMessages: [],
    steeredMessages: [],
    contextSummary: null,
  };
}

describe("questions and durable waits in stored snapshots", () => {
  it("a reloaded page gets a question part after each call with a pending question, and a timer part after each durable wait", () => {
    const messages = convertAgentSnapshotToUIMessages(snapshot([
      record("c1", "ask_user", "awaiting_answer", '{"question":"Which size?","choices":["S","M"],"allows_free_text":false}'),
      record("c2", "book_flight", "awaiting_answer", '{"to":"OSL"}', { inputQuestion: "Window or aisle?" }),
      record("c3", "durable_wait", "waiting_for_timer", '{"duration_seconds":86400,"reason":"the carrier updates overnight"}', { waitUntil: "2026-12-04T10:00:00.000Z" }),
      record("c4", "ask_user", "succeeded", '{"question":"Name?"}', { output: '{"status":"answered","answer":"Ada"}' }),
    ], [
      question("c1", "c1", "ask_user", { question: "Which size?", choices: ["S", "M"], allowsFreeText: false, deadline: "2026-12-05T00:00:00.000Z" }),
      question("c2-input-1", "c2", "book_flight", { question: "Window or aisle?" }),
      question("c9", "c9", "ask_user", { question: "Another turn's", turnId: "turn-1" }),
    ]));
    assert.deepEqual(messages.at(-1)?.parts, [
      { type: "dynamic-tool", toolCallId: "c1", toolName: "ask_user", state: "input-available", input: { question: "Which size?", choices: ["S", "M"], allows_free_text: false } },
      {
        type: "data-agent-question",
        id: "c1",
        data: { interruptId: "c1", toolCallId: "c1", toolName: "ask_user", question: "Which size?", choices: ["S", "M"], allowsFreeText: false, deadline: "2026-12-05T00:00:00.000Z" },
      },
      { type: "dynamic-tool", toolCallId: "c2", toolName: "book_flight", state: "input-available", input: { to: "OSL" } },
      {
        type: "data-agent-question",
        id: "c2-input-1",
        data: { interruptId: "c2-input-1", toolCallId: "c2", toolName: "book_flight", question: "Window or aisle?", choices: [], allowsFreeText: true, deadline: null },
      },
      { type: "dynamic-tool", toolCallId: "c3", toolName: "durable_wait", state: "input-available", input: { duration_seconds: 86400, reason: "the carrier updates overnight" } },
      { type: "data-agent-timer", id: "c3", data: { toolCallId: "c3", waitUntil: "2026-12-04T10:00:00.000Z", reason: "the carrier updates overnight" } },
      { type: "dynamic-tool", toolCallId: "c4", toolName: "ask_user", state: "output-available", input: { question: "Name?" }, output: '{"status":"answered","answer":"Ada"}' },
    ]);
  });
});

describe("question responses from the browser", () => {
  const part = (interruptId: unknown, response: unknown, extra: Record<string, unknown> = {}) => ({ type: "data-agent-question", id: interruptId, data: { interruptId, question: "?", response }, ...extra });

  it("reads answered and declined question parts bound to the message's turn, skipping anything malformed", () => {
    const responses = readAgentQuestionResponses({
      id: "turn-4-assistant",
      role: "assistant",
      parts: [
        part("q1", { answer: "M" }),
        part("q2", { declined: true, reason: "later" }),
        part("q3", { declined: true }),
        part("q4", undefined),
        part("q5", { answer: 5 }),
        part("q6", { declined: "yes" }),
        part(7, { answer: "x" }),
        { ...part("q8", { answer: "x" }), type: "data-agent-timer" },
        { type: "data-agent-question", id: "q9", data: { response: { answer: "from the part id" } } },
        null,
      ],
    });
    assert.deepEqual(responses, [
      { interruptId: "q1", answer: "M", turnId: "turn-4" },
      { interruptId: "q2", answer: null, reason: "later", turnId: "turn-4" },
      { interruptId: "q3", answer: null, turnId: "turn-4" },
      { interruptId: "q9", answer: "from the part id", turnId: "turn-4" },
    ]);
    assert.deepEqual(readAgentQuestionResponses({ id: "elsewhere", role: "assistant", parts: [part("q1", { answer: "M" })] }).map((response) => response.turnId), [null]);
    assert.deepEqual(readAgentQuestionResponses("nonsense"), []);
  });

  it("reads at most 100 responses and keeps the first per interrupt ID", () => {
    const parts = Array.from({ length: 150 }, (_, index) => part(`q-${index}`, { answer: "a" }));
    assert.equal(readAgentQuestionResponses({ id: "turn-1-assistant", role: "assistant", parts }).length, maxAgentQuestionResponses);
    const selected = selectAgentQuestionResponses([
      { interruptId: "x", answer: "first", turnId: "turn-1" },
      { interruptId: "x", answer: "second", turnId: "turn-1" },
      { interruptId: "y", answer: null, reason: "no", turnId: "turn-1" },
      { interruptId: 5, answer: "bad" },
      { interruptId: "z", answer: 5 },
    ]);
    assert.deepEqual(selected, [
      { interruptId: "x", answer: "first", turnId: "turn-1" },
      { interruptId: "y", answer: null, reason: "no", turnId: "turn-1" },
    ]);
    assert.throws(() => selectAgentQuestionResponses("q1" as unknown as unknown[]), /questionResponses must be an array/);
  });
});

describe("how a late answer's question ended", () => {
  const resolution = (interruptId: string, value: AgentToolCallRecord | undefined) => questionOutcomeChunk(interruptId, value?.toolCallId ?? "c1", value)?.data.resolution;

  it("reads an ask_user call's final record, a tool's recorded answers, and says no_longer_pending when nothing committed tells", () => {
    assert.equal(resolution("c1", record("c1", "ask_user", "succeeded", "{}")), "answered");
    assert.equal(resolution("c1", record("c1", "ask_user", "rejected", "{}", { error: "The user declined to answer." })), "declined");
    assert.equal(resolution("c1", record("c1", "ask_user", "rejected", "{}", { error: "question deadline passed" })), "deadline_passed");
    assert.equal(resolution("c1", record("c1", "ask_user", "awaiting_answer", "{}")), undefined, "still moving on: its events follow");
    assert.equal(resolution("c2-input-1", record("c2", "book_flight", "approved", "{}", { inputAnswers: [{ interruptId: "c2-input-1", resolution: "answered", answer: "aisle" }] })), "answered");
    assert.equal(resolution("c2-input-1", record("c2", "book_flight", "approved", "{}")), undefined);
    assert.equal(resolution("c2-input-1", record("c2", "book_flight", "succeeded", "{}")), "no_longer_pending");
    assert.equal(resolution("c1", undefined), "no_longer_pending");
  });
});

describe("plan parts", () => {
  it("carry the committed tasks only while the plan still has the event's revision", () => {
    const committed = { revision: 3, status: "draft" as const, tasks: [{ content: "Check stock", status: "pending" as const }], updatedAt: "" };
    assert.deepEqual(planChunk({ revision: 3, status: "draft", taskCount: 1 }, committed), {
      type: "data-agent-plan",
      id: "agent-plan",
      data: { revision: 3, status: "draft", taskCount: 1, tasks: [{ content: "Check stock", status: "pending" }] },
    });
    assert.equal(planChunk({ revision: 2, status: "draft", taskCount: 4 }, committed).data.tasks, null);
    assert.equal(planChunk({ revision: 1, status: "active", taskCount: 0 }, undefined).data.tasks, null);
  });
});
