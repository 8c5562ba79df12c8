/**
 * The session-program oracle on a hand-made observation: a turn with a read
 * and an approved single-attempt write. It accepts the right run and names
 * each kind of wrong one.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AgentEvent } from "../../contract/values/agent-event.ts";
import type { AgentMessage } from "../../contract/values/agent-message.ts";
import type { AgentSnapshot } from "../../contract/values/agent-snapshot.ts";
import { emptyAgentUsage } from "../../contract/values/agent-usage.ts";
import { outcomeUnknownToolResult } from "../../contract/values/result-texts.ts";
import type { InvocationLogEntry } from "../invocation-log.ts";
import { checkSessionProgram, type SessionProgramObservation } from "./check-session-program.ts";
import { programModelText, programToolOutput, programUserText } from "./program-texts.ts";
import { sessionProgramFlowId } from "./session-program-flow.ts";
import type { ProgramToolCall, SessionProgram } from "./session-program.ts";

const lookup: ProgramToolCall = {
  toolCallId: "turn-1-call-1-0", toolName: "lookup_record", arguments: { n: 4 }, effect: "read", requiresApproval: false, approval: null, behavior: { kind: "succeed", transientFailures: 0 },
};
const payment: ProgramToolCall = {
  toolCallId: "turn-1-call-1-1", toolName: "send_payment", arguments: { n: 9 }, effect: "non_idempotent_write", requiresApproval: true, approval: { approved: true }, behavior: { kind: "succeed", transientFailures: 0 },
};
const program: SessionProgram = {
  seed: 0,
  turns: [{
    turnId: "turn-1",
    userText: programUserText(0, 1),
    modelCalls: [
      { modelCall: 1, transientFailures: 0, alwaysFails: false, toolCalls: [lookup, payment] },
      { modelCall: 2, transientFailures: 0, alwaysFails: false, toolCalls: [] },
    ],
  }],
};

function message(sequence: number, fields: Pick<AgentMessage, "role" | "text"> & Partial<AgentMessage>): AgentMessage {
  return { sequence, turnId: "turn-1", createdAt: "2026-12-03T00:00:00.000Z", frameworkItem: null, ...fields };
}

function event(type: AgentEvent["type"], payload: Record<string, unknown>): AgentEvent {
  return { type, turnId: "turn-1", attempt: 1, stepExecutionId: "1", payload };
}

function run(toolCallId: string, attempt: number): InvocationLogEntry {
  return { name: toolCallId, processId: 1, recordedAt: 0, details: { toolName: toolCallId === lookup.toolCallId ? lookup.toolName : payment.toolName, attempt, idempotencyKey: `${sessionProgramFlowId}/turn-1/${toolCallId}` } };
}

/** The observation of a run that went exactly as planned. */
function rightObservation(paymentStatus: "succeeded" | "outcome_unknown" = "succeeded"): SessionProgramObservation {
  const paymentText = paymentStatus === "succeeded" ? programToolOutput(payment.toolName, payment.toolCallId, 9) : outcomeUnknownToolResult;
  const messages = [
    message(1, { role: "user", text: program.turns[0]!.userText }),
    message(2, { role: "assistant", text: programModelText("turn-1", 1, []) }),
    message(3, { role: "tool", text: programToolOutput(lookup.toolName, lookup.toolCallId, 4), toolCallId: lookup.toolCallId, toolName: lookup.toolName }),
    message(4, { role: "tool", text: paymentText, toolCallId: payment.toolCallId, toolName: payment.toolName }),
    message(5, { role: "assistant", text: programModelText("turn-1", 2, [{ toolCallId: lookup.toolCallId, status: "succeeded" }, { toolCallId: payment.toolCallId, status: paymentStatus }]) }),
  ];
  const snapshot: AgentSnapshot = {
    state: { status: "waiting_for_user_message", activeTurnId: null, turnCount: 1, messageCount: 5, lastTurnError: null, createdAt: "", updatedAt: "" },
    messages,
    pendingInterrupts: [],
    toolCalls: [],
    usage: { ...emptyAgentUsage(), requests: 2, inputTokens: 20, outputTokens: 10, totalTokens: 30 },
    queuedMessageCount: 0,
    queuedMessages: [],
    steeredMessages: [],
    contextSummary: null,
  };
  const events = [
    event("turn_started", { sequence: 1 }),
    event("usage_recorded", {}),
    event("tool_call_deferred", { tool_call_id: lookup.toolCallId, effect: "read", requires_approval: false }),
    event("tool_call_deferred", { tool_call_id: payment.toolCallId, effect: "non_idempotent_write", requires_approval: true }),
    event("interrupt_raised", { tool_call_id: payment.toolCallId, interrupt_id: `${payment.toolCallId}-approval` }),
    event("tool_call_started", { tool_call_id: lookup.toolCallId }),
    event("tool_call_finished", { tool_call_id: lookup.toolCallId, status: "succeeded" }),
    event("interrupt_resolved", { interrupt_id: `${payment.toolCallId}-approval`, approved: true }),
    event("tool_call_started", { tool_call_id: payment.toolCallId }),
    event("tool_call_finished", { tool_call_id: payment.toolCallId, status: paymentStatus }),
    event("usage_recorded", {}),
    event("turn_completed", { message_count: 4 }),
  ];
  return { snapshot, events, toolRuns: [run(lookup.toolCallId, 1), run(payment.toolCallId, 1)], flowId: sessionProgramFlowId };
}

void test("the oracle accepts a run that ended exactly as its program says", () => {
  assert.deepEqual(checkSessionProgram(program, rightObservation(), "exact").violations, []);
});

void test("the oracle reports a single-attempt tool that ran twice, with or without a kill", () => {
  const observation = rightObservation();
  const twice = { ...observation, toolRuns: [...observation.toolRuns, run(payment.toolCallId, 2)] };
  for (const mode of ["exact", "killed", "faulted"] as const) {
    assert.ok(checkSessionProgram(program, twice, mode).violations.some((violation) => violation.includes(`${payment.toolCallId} (send_payment, non_idempotent_write) ran 2 times`)), mode);
  }
});

void test("the oracle reports a lost tool result, a model that saw a wrong status, and a double-counted model call", () => {
  const observation = rightObservation();
  const lost = { ...observation, snapshot: { ...observation.snapshot, messages: observation.snapshot.messages.filter((entry) => entry.sequence !== 4) } };
  assert.match(checkSessionProgram(program, lost, "exact").violations.join("\n"), /expected the result of turn-1-call-1-1/);
  const wrongText = observation.snapshot.messages.map((entry) => (entry.sequence === 5 ? { ...entry, text: entry.text.replace("turn-1-call-1-1=succeeded", "turn-1-call-1-1=failed") } : entry));
  assert.match(checkSessionProgram(program, { ...observation, snapshot: { ...observation.snapshot, messages: wrongText } }, "exact").violations.join("\n"), /the model's text is/);
  const doubled = { ...observation, snapshot: { ...observation.snapshot, usage: { ...observation.snapshot.usage, requests: 3 } } };
  assert.match(checkSessionProgram(program, doubled, "exact").violations.join("\n"), /usage counts 3 requests/);
});

void test("the oracle allows outcome_unknown for a single-attempt write only after a kill or a store fault", () => {
  const unknown = rightObservation("outcome_unknown");
  assert.match(checkSessionProgram(program, unknown, "exact").violations.join("\n"), /turn-1-call-1-1 .* ended outcome-unknown/);
  const killed = checkSessionProgram(program, unknown, "killed");
  assert.deepEqual(killed.violations, []);
  assert.deepEqual(killed.degradedCalls, ["turn-1-call-1-1 outcome-unknown"]);
  const neverRan = { ...unknown, toolRuns: unknown.toolRuns.filter((entry) => entry.name !== payment.toolCallId) };
  assert.deepEqual(checkSessionProgram(program, neverRan, "killed").violations, [], "a killed write may not have run");
});

void test("the oracle reports a rejected call whose tool ran", () => {
  const rejected: SessionProgram = structuredClone(program);
  rejected.turns[0]!.modelCalls[0]!.toolCalls[1]!.approval = { approved: false, rejectionMessage: null };
  const violations = checkSessionProgram(rejected, rightObservation(), "killed").violations.join("\n");
  assert.match(violations, /turn-1-call-1-1 .* ended succeeded/);
});
