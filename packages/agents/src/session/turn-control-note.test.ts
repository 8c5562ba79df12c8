/**
 * Turn control with a runner of its own that has no
 * `buildUnfinishedTurnMessages`: a steered turn and a cancelled turn store
 * the note that starts with `turnSteeredNoteHeader` / `turnCancelledNoteHeader`
 * and lists the calls that ran. Also `describeAgentSessionFeatures` and the
 * wire form of the new record and state fields.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidInputError } from "@perdure/engine";
import { pollUntil } from "@perdure/engine/testing";
import type { AgentFrameworkRunner, AgentTurnContext, AgentTurnOutcome, DeferredToolExecution } from "../contract/agent-framework-runner.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { agentStateFromWire, agentStateToWire } from "../contract/values/agent-state.ts";
import { agentToolCallFromWire, agentToolCallToWire, type AgentToolCallRecord } from "../contract/values/agent-tool-call.ts";
import { emptyAgentUsage } from "../contract/values/agent-usage.ts";
import { toolCallCancelledBySteeringResult, turnCancelledNoteHeader, turnSteeredNoteHeader } from "../contract/values/result-texts.ts";
import { createAgentSessionFlow, describeAgentSessionFeatures } from "./create-agent-session-flow.ts";
import { startSessionHarness, waitForTurns } from "./test-fixtures/session-harness.ts";

/** Looks up and asks for approval of a refund on the first model call of each turn that says "work"; answers otherwise. */
class NoteRunner implements AgentFrameworkRunner {
  release: () => void = () => undefined;
  private released = new Promise<void>((resolve) => {
    this.release = resolve;
  });

  buildUserMessage(text: string) {
    return { role: "user" as const, text, frameworkItem: { type: "user_text", text } };
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const usage = emptyAgentUsage();
    const lastUser = turn.messages.filter((message) => message.role === "user").at(-1)?.text ?? "";
    if (turn.frameworkRunState === null && lastUser === "work") {
      return {
        kind: "tool_calls_requested", frameworkRunState: "1", usage,
        toolCalls: [
          { toolCallId: `${turn.turnId}-lookup`, toolName: "lookup", arguments: "{}", policy: { effect: "read", requiresApproval: false } },
          { toolCallId: `${turn.turnId}-refund`, toolName: "refund", arguments: "{}", policy: { effect: "idempotent_write", requiresApproval: true } },
        ],
      };
    }
    const text = `answer to ${lastUser}`;
    return { kind: "turn_completed", newMessages: [{ role: "assistant", text, frameworkItem: { text } }], usage };
  }

  async executeDeferredToolCall(call: DeferredToolExecution) {
    if (call.toolCall.toolName === "lookup") await this.released;
    return { output: `${call.toolCall.toolName} done` };
  }
}

void test("without buildUnfinishedTurnMessages a steered turn and a cancelled turn store notes that list the calls that ran", async (t) => {
  const runner = new NoteRunner();
  const flow = createAgentSessionFlow(runner, "TurnControlNotes");
  const harness = await startSessionHarness([flow]);
  t.after(() => harness.dispose());
  const sessions = new AgentSessionTestClient(harness.client, flow);

  await sessions.start("n1", { initialMessage: "work" });
  await sessions.waitForPendingInterrupts("n1");
  assert.equal(await sessions.steerUserMessage("n1", { messageId: null, text: "something else" }), true);
  await pollUntil(async () => ((await sessions.getAgentSnapshot("n1")).pendingInterrupts.length === 0 ? true : undefined), { description: "the steer wake" });
  runner.release();
  await waitForTurns(harness, "n1", 2);
  const steered = (await sessions.getAgentSnapshot("n1")).messages.find((message) => message.role === "system");
  assert.deepEqual(steered?.text.split("\n"), [
    turnSteeredNoteHeader,
    "These tool calls ran during it:",
    "- lookup (turn-1-lookup): succeeded: lookup done",
    `- refund (turn-1-refund): rejected: ${toolCallCancelledBySteeringResult}`,
    "Do not repeat these tool calls unless the user asks again.",
  ]);

  assert.equal(await sessions.sendUserMessage("n1", "work"), true);
  await sessions.waitForPendingInterrupts("n1");
  // The lookup was released above, so this turn's tools are done; cancel while the approval waits.
  await pollUntil(async () => ((await sessions.getAgentSnapshot("n1")).toolCalls.find((call) => call.toolCallId === "turn-3-lookup")?.status === "succeeded" ? true : undefined), { description: "the lookup" });
  assert.equal(await sessions.cancelTurn("n1"), true);
  await waitForTurns(harness, "n1", 3);
  const notes = (await sessions.getAgentSnapshot("n1")).messages.filter((message) => message.role === "system");
  assert.equal(notes.length, 2);
  assert.equal(notes[1]?.text.split("\n")[0], turnCancelledNoteHeader);
  assert.ok(notes[1]?.text.includes("- refund (turn-3-refund): rejected:"), notes[1]?.text);
});

void test("describeAgentSessionFeatures reports plan mode and the built-in tools, and refuses a Flow it did not build", () => {
  const runner = new NoteRunner();
  assert.deepEqual(describeAgentSessionFeatures(createAgentSessionFlow(runner, "FeaturesPlain")), { planModeEnabled: false, builtInTools: [], modelChoices: [] });
  assert.deepEqual(describeAgentSessionFeatures(createAgentSessionFlow(runner, "FeaturesBuiltIns", { builtInTools: ["durable_wait", "ask_user"] })), {
    planModeEnabled: false, builtInTools: ["ask_user", "durable_wait"], modelChoices: [],
  });
  assert.throws(() => describeAgentSessionFeatures({ flowType: "Other" } as never), (error: unknown) => InvalidInputError.isInstance(error) && /Other is not a Flow that createAgentSessionFlow built/.test((error as Error).message));
});

void test("the new record and state fields round-trip through their snake_case wire form, and older values decode without them", () => {
  const record: AgentToolCallRecord = {
    toolCallId: "c1", toolName: "report", arguments: "{}", effect: "read", requiresApproval: false, status: "waiting_for_task", output: null, error: null,
    turnId: "turn-1", deferralOrder: 0, taskId: "job-1", taskPollIntervalSeconds: 5, taskAnswerPending: true, cancellationReason: "turn_cancelled",
  };
  const wire = agentToolCallToWire(record);
  assert.deepEqual([wire.task_id, wire.task_poll_interval_seconds, wire.task_answer_pending, wire.cancellation_reason], ["job-1", 5, true, "turn_cancelled"]);
  assert.deepEqual(agentToolCallFromWire(wire), record);
  const older = agentToolCallFromWire({ ...wire, task_id: undefined, task_poll_interval_seconds: undefined, task_answer_pending: undefined, cancellation_reason: "unknown" });
  assert.deepEqual([older.taskId, older.taskPollIntervalSeconds, older.taskAnswerPending, older.cancellationReason], [undefined, undefined, undefined, undefined]);
  const state = { status: "running_model" as const, activeTurnId: "turn-1", turnCount: 1, messageCount: 1, lastTurnError: null, createdAt: "", updatedAt: "", acceptsTurnControl: true };
  assert.equal(agentStateToWire(state).accepts_turn_control, true);
  assert.deepEqual(agentStateFromWire(agentStateToWire(state)), state);
  const earlier = { ...agentStateToWire(state) };
  delete earlier.accepts_turn_control;
  assert.equal(agentStateFromWire(earlier).acceptsTurnControl, undefined, "a state an earlier Worker wrote does not accept turn control");
});
