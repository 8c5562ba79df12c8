import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { eventFamilyOf, summarizeEvent } from "./event-summary.ts";

// The payloads as packages/agents writes them (interruptResolvedPayload).
const resolved = (fields: Record<string, unknown>) => ({
  type: "interrupt_resolved",
  payload: { interrupt_id: "i1", kind: "approval", approved: false, answered: false, rejection_message: null, cancellation_reason: null, ...fields },
});

describe("the Events tab's line for an interrupt's end", () => {
  it("an answered question reads as answered, not approved (the session records it with approved: true)", () => {
    assert.equal(summarizeEvent(resolved({ kind: "question", approved: true, answered: true })), "question answered");
  });

  it("a declined question, with the person's message when there is one", () => {
    assert.equal(summarizeEvent(resolved({ kind: "question" })), "question declined");
    assert.equal(summarizeEvent(resolved({ kind: "question", rejection_message: "I will keep it" })), "question declined: I will keep it");
  });

  it("approvals read as approved or rejected, with the reason", () => {
    assert.equal(summarizeEvent(resolved({ approved: true })), "approved");
    assert.equal(summarizeEvent(resolved({ rejection_message: "not now" })), "rejected: not now");
    assert.equal(summarizeEvent(resolved({})), "rejected");
  });

  it("an interrupt a stop or a steered message ended reads as withdrawn, whichever its kind", () => {
    assert.equal(summarizeEvent(resolved({ cancellation_reason: "turn_cancelled" })), "approval withdrawn: the turn was stopped");
    assert.equal(summarizeEvent(resolved({ kind: "question", cancellation_reason: "steered" })), "question withdrawn: a message steered the turn");
  });

  it("interrupt events belong to the interrupt family", () => {
    assert.equal(eventFamilyOf("interrupt_resolved"), "interrupt");
    assert.equal(eventFamilyOf("mcp.tool_progress"), "tool");
  });
});
