import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError, type Client } from "@perdure/engine";
import { pollUntil } from "@perdure/engine/testing";
import { createAgentSessionFlow } from "./create-agent-session-flow.ts";
import { ScriptedAgentRunner, type ScriptInput, type ScriptReply } from "../testing/scripted-agent-runner.ts";
import { startSessionHarness, waitForTurns } from "./test-fixtures/session-harness.ts";
import { ToolExecutionError } from "../contract/tool-execution-error.ts";
import { approvalDeadlinePassed } from "../contract/values/result-texts.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";

function lookupThenAnswer(input: ScriptInput): ScriptReply {
  if (input.modelCall === 1) return { toolCalls: [{ name: "lookup_order", arguments: { order_id: "7" } }], text: "Let me look." };
  return { text: `Answer: ${input.previousResults.map((call) => call.output).join(", ")}` };
}

/** `resolve_interrupt` may meet a running Step's lock; the test client retries, as the contract advises. */
function resolveInterrupt(
  harness: { client: Client },
  flow: ReturnType<typeof createAgentSessionFlow>,
  flowId: string,
  input: { interruptId: string; approved: boolean; rejectionMessage?: string },
): Promise<boolean> {
  return new AgentSessionTestClient(harness.client, flow).resolveInterrupt(flowId, input);
}

const lookupOrder = { effect: "read" as const, execute: async (args: Record<string, unknown>) => `order ${String(args.order_id)}: shipped` };

describe("agent session", () => {
  it("a read tool turn stores its transcript in order and runs the contract's Step shape", async () => {
    const flow = createAgentSessionFlow(new ScriptedAgentRunner(lookupThenAnswer, { lookup_order: lookupOrder }), "ReadTurn");
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "s1", { initial_message: "Where is order 7?" });
      const state = await waitForTurns(harness, "s1", 1);
      assert.equal(state.messageCount, 4);
      assert.equal(state.lastTurnError, null);
      const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "s1");
      assert.deepEqual(snapshot.messages.map((message) => [message.sequence, message.role, message.text, message.turnId]), [
        [1, "user", "Where is order 7?", "turn-1"],
        [2, "assistant", "Let me look.", "turn-1"],
        [3, "tool", "order 7: shipped", "turn-1"],
        [4, "assistant", "Answer: order 7: shipped", "turn-1"],
      ]);
      assert.deepEqual(snapshot.toolCalls, []);
      assert.deepEqual(snapshot.usage.totalTokens, 30);
      const history = await harness.client.getStepHistory("s1");
      const executes = history.filter((entry) => entry.method === "execute" && entry.status === "completed").map((entry) => entry.stepType);
      assert.deepEqual(executes, ["StartAgentSession", "RunModel", "CallTool", "ResumeTurn", "RunModel"]);
      await pollUntil(async () => (await harness.client.describe("s1")).executions.some((execution) => execution.stepType === "AwaitUserMessage" && execution.status === "waiting"));
      const events = (await harness.client.readStream("s1", flow.agentEvents, { limit: 100 })).messages.map((message) => message.value);
      assert.deepEqual(events.map((event) => event.type), [
        "turn_started", "usage_recorded", "tool_call_deferred", "tool_call_started", "tool_call_finished", "text_delta", "usage_recorded", "turn_completed",
      ]);
      assert.deepEqual(events.at(-1)?.payload, { message_count: 3 });
      assert.deepEqual(events[0]?.payload, { sequence: 1 });
      assert.ok(events.every((event) => event.turnId === "turn-1" && event.attempt === 1 && event.stepExecutionId !== ""));
      assert.deepEqual(events[2]?.payload, { tool_call_id: "turn-1-call-1-0", tool_name: "lookup_order", effect: "read", requires_approval: false });
    } finally {
      await harness.dispose();
    }
  });

  it("runs the tool calls of one response in parallel and resumes once all are final", async () => {
    let running = 0;
    let maximumRunning = 0;
    const slow = {
      effect: "read" as const,
      execute: async (args: Record<string, unknown>) => {
        running += 1;
        maximumRunning = Math.max(maximumRunning, running);
        await new Promise((resolve) => setTimeout(resolve, 150));
        running -= 1;
        return `done ${String(args.n)}`;
      },
    };
    const runner = new ScriptedAgentRunner((input) => input.modelCall === 1
      ? { toolCalls: [1, 2, 3].map((n) => ({ name: "slow", arguments: { n } })) }
      : { text: input.previousResults.map((call) => call.output).join("|") }, { slow });
    const flow = createAgentSessionFlow(runner, "Parallel");
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "p1", { initial_message: "go" });
      await waitForTurns(harness, "p1", 1);
      assert.equal(maximumRunning, 3);
      const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "p1");
      assert.equal(snapshot.messages.at(-1)?.text, "done 1|done 2|done 3");
    } finally {
      await harness.dispose();
    }
  });

  it("an approved write runs once in CallSingleAttemptTool; a rejection records the reason", async () => {
    const refunds: string[] = [];
    const refund = {
      effect: "non_idempotent_write" as const,
      execute: async (args: Record<string, unknown>, call: { idempotencyKey: string }) => {
        refunds.push(`${String(args.order_id)}@${call.idempotencyKey}`);
        return "refunded";
      },
    };
    const runner = new ScriptedAgentRunner((input) => input.modelCall === 1
      ? { toolCalls: [{ name: "refund_order", arguments: { order_id: input.userTexts.at(-1) ?? "" } }] }
      : { text: `result: ${input.previousResults[0]?.status}: ${input.previousResults[0]?.output}` }, { refund_order: refund });
    const flow = createAgentSessionFlow(runner, "Approvals");
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "a1", { initial_message: "o-1" });
      const pending = await pollUntil(async () => {
        const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "a1");
        return snapshot.pendingInterrupts.length === 1 ? snapshot : undefined;
      });
      const [interrupt] = pending.pendingInterrupts;
      assert.equal(interrupt?.kind, "approval");
      assert.equal(interrupt?.toolName, "refund_order");
      assert.equal(pending.toolCalls[0]?.status, "awaiting_approval");
      assert.equal(pending.state?.status, "running_tools");
      assert.equal(refunds.length, 0);
      assert.equal(await harness.client.invokeRPC(flow.resolveInterrupt, "a1", { interruptId: "nope", approved: true }), false);
      assert.equal(await resolveInterrupt(harness, flow, "a1", { interruptId: interrupt?.interruptId ?? "", approved: true }), true);
      assert.equal(await resolveInterrupt(harness, flow, "a1", { interruptId: interrupt?.interruptId ?? "", approved: true }), false);
      await waitForTurns(harness, "a1", 1);
      assert.deepEqual(refunds, ["o-1@a1/turn-1/turn-1-call-1-0"]);
      const history = await harness.client.getStepHistory("a1");
      assert.ok(history.some((entry) => entry.stepType === "CallSingleAttemptTool" && entry.status === "completed"));

      await harness.client.invokeRPC(flow.sendUserMessage, "a1", { text: "o-2" });
      const second = await pollUntil(async () => {
        const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "a1");
        return snapshot.pendingInterrupts.length === 1 ? snapshot : undefined;
      });
      await resolveInterrupt(harness, flow, "a1", { interruptId: second.pendingInterrupts[0]?.interruptId ?? "", approved: false, rejectionMessage: "not allowed" });
      await waitForTurns(harness, "a1", 2);
      const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "a1");
      assert.equal(snapshot.messages.at(-1)?.text, "result: rejected: The user rejected this tool call: not allowed");
      assert.deepEqual(refunds, ["o-1@a1/turn-1/turn-1-call-1-0"]);
    } finally {
      await harness.dispose();
    }
  });

  it("an approval whose deadline passes is rejected with the contract's text", async () => {
    const runner = new ScriptedAgentRunner((input) => input.modelCall === 1
      ? { toolCalls: [{ name: "wire_money", arguments: {} }] }
      : { text: `${input.previousResults[0]?.status}: ${input.previousResults[0]?.error}` }, {
      wire_money: { effect: "non_idempotent_write", execute: async () => "sent" },
    });
    const flow = createAgentSessionFlow(runner, "Deadlines", { interruptDeadlineMs: 300 });
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "d1", { initial_message: "send it" });
      await waitForTurns(harness, "d1", 1);
      const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "d1");
      assert.equal(snapshot.messages.at(-1)?.text, `rejected: ${approvalDeadlinePassed}`);
      assert.deepEqual(snapshot.pendingInterrupts, []);
      const events = (await harness.client.readStream("d1", flow.agentEvents, { limit: 100 })).messages.map((message) => message.value);
      const resolved = events.find((event) => event.type === "interrupt_resolved");
      assert.deepEqual(resolved?.payload, {
        interrupt_id: "turn-1-call-1-0-approval", kind: "approval", approved: false, answered: false, rejection_message: "approval deadline passed", cancellation_reason: null,
      });
    } finally {
      await harness.dispose();
    }
  });

  it("an approval survives a Worker restart", async () => {
    const runner = new ScriptedAgentRunner((input) => input.modelCall === 1
      ? { toolCalls: [{ name: "send_invoice", arguments: { order_id: "7" } }] }
      : { text: `${input.previousResults[0]?.status}` }, { send_invoice: { effect: "non_idempotent_write", execute: async () => "sent" } });
    const flow = createAgentSessionFlow(runner, "Restarts");
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "r1", { initial_message: "clean up" });
      const interruptId = await pollUntil(async () => (await harness.client.invokeRPC(flow.getAgentSnapshot, "r1")).pendingInterrupts[0]?.interruptId);
      await harness.restartWorker();
      assert.equal(await resolveInterrupt(harness, flow, "r1", { interruptId, approved: true }), true);
      await waitForTurns(harness, "r1", 1);
      assert.equal((await harness.client.invokeRPC(flow.getAgentSnapshot, "r1")).messages.at(-1)?.text, "succeeded");
    } finally {
      await harness.dispose();
    }
  });

  it("a message sent during a turn is queued and starts the next turn", async () => {
    const runner = new ScriptedAgentRunner((input) => input.modelCall === 1
      ? { toolCalls: [{ name: "wait", arguments: {} }] }
      : { text: `re: ${input.userTexts.at(-1)}` }, {
      wait: { effect: "read", execute: async () => { await new Promise((resolve) => setTimeout(resolve, 300)); return "waited"; } },
    });
    const flow = createAgentSessionFlow(runner, "Queues");
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "q1", { initial_message: "first" });
      await harness.waitForState("q1", (state) => state.status === "running_tools", "the first turn's tools");
      assert.equal(await harness.client.invokeRPC(flow.sendUserMessage, "q1", { text: "second" }), true);
      const during = await harness.client.invokeRPC(flow.getAgentSnapshot, "q1");
      assert.equal(during.queuedMessageCount, 1);
      assert.equal(during.queuedMessages[0]?.text, "second");
      await waitForTurns(harness, "q1", 2);
      const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "q1");
      assert.deepEqual(snapshot.messages.filter((message) => message.role === "user").map((message) => [message.text, message.turnId]), [["first", "turn-1"], ["second", "turn-2"]]);
      assert.equal(snapshot.messages.at(-1)?.text, "re: second");
      assert.equal(snapshot.queuedMessageCount, 0);
    } finally {
      await harness.dispose();
    }
  });

  it("pages messages, refuses blank text, and gives bad RPC input a clear error that changes nothing", async () => {
    const runner = new ScriptedAgentRunner((input) => ({ text: `echo ${input.userTexts.at(-1)}` }));
    const flow = createAgentSessionFlow(runner, "Paging", { maxUserMessageBytes: 1000 });
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "m1", {});
      for (let index = 1; index <= 5; index += 1) {
        assert.equal(await harness.client.invokeRPC(flow.sendUserMessage, "m1", { text: `hello ${index}` }), true);
        await waitForTurns(harness, "m1", index);
      }
      const newest = await harness.client.invokeRPC(flow.listAgentMessages, "m1", { limit: 4 });
      assert.deepEqual(newest.messages.map((message) => message.sequence), [7, 8, 9, 10]);
      assert.equal(newest.nextBeforeSequence, 7);
      const older = await harness.client.invokeRPC(flow.listAgentMessages, "m1", { beforeSequence: 7, limit: 1000 });
      assert.deepEqual(older.messages.map((message) => message.sequence), [1, 2, 3, 4, 5, 6]);
      assert.equal(older.nextBeforeSequence, null);
      assert.equal(older.deletedBeforeSequence, null);
      assert.equal((await harness.client.invokeRPC(flow.listAgentMessages, "m1", { limit: 0 })).messages.length, 1);
      // Python's str.strip() whitespace: U+3000 and U+001F are blank, U+FEFF is not.
      assert.equal(await harness.client.invokeRPC(flow.sendUserMessage, "m1", { text: " \t\n\u3000\u001f" }), false);
      assert.equal(await harness.client.invokeRPC(flow.sendUserMessage, "m1", { text: "x", planMode: true }), false);
      await assert.rejects(harness.client.invokeRPC(flow.sendUserMessage, "m1", { text: 5 } as never), (error: unknown) =>
        InvalidInputError.isInstance(error) && /send_user_message .*text must be a string, got 5/.test(error.message));
      await assert.rejects(harness.client.invokeRPC(flow.sendUserMessage, "m1", { text: "y".repeat(1001) }), /1001 bytes is over the session's maxUserMessageBytes of 1000/);
      await assert.rejects(harness.client.invokeRPC(flow.resolveInterrupt, "m1", { interruptId: "", approved: true }), /interruptId must be a non-empty string/);
      await assert.rejects(harness.client.invokeRPC(flow.resolveInterrupt, "m1", { interruptId: "x", approved: "yes" } as never), /approved must be a boolean/);
      await assert.rejects(harness.client.invokeRPC(flow.listAgentMessages, "m1", { beforeSequence: "7" } as never), /beforeSequence must be an integer/);
      const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "m1");
      assert.equal(snapshot.queuedMessageCount, 0);
      assert.equal(snapshot.state?.messageCount, 10);
      assert.equal(await harness.client.invokeRPC(flow.sendUserMessage, "m1", { text: "\ufeff" }), true);
    } finally {
      await harness.dispose();
    }
  });

  it("a failed turn keeps its user message, stores its tool results, then the failure note", async () => {
    const runner = new ScriptedAgentRunner((input) => {
      if (input.modelCall === 1) return { toolCalls: [{ name: "lookup_order", arguments: { order_id: "9" } }] };
      throw new Error("model overloaded");
    }, { lookup_order: lookupOrder });
    const flow = createAgentSessionFlow(runner, "Failures");
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "f1", { initial_message: "order 9?" });
      // Three RunModel attempts with the default 1 s, 2 s backoff.
      const state = await harness.waitForState("f1", (candidate) => candidate.lastTurnError !== null, "the turn to fail");
      assert.equal(state.lastTurnError, "Error: model overloaded");
      assert.equal(state.activeTurnId, null);
      const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "f1");
      assert.deepEqual(snapshot.messages.map((message) => message.role), ["user", "assistant", "tool", "system"]);
      assert.equal(snapshot.messages[2]?.text, "order 9: shipped");
      assert.match(snapshot.messages[3]?.text ?? "", /lookup_order \(turn-1-call-1-0\): succeeded: order 9: shipped/);
      const events = (await harness.client.readStream("f1", flow.agentEvents, { limit: 100 })).messages.map((message) => message.value);
      assert.deepEqual(events.at(-1)?.payload, { error: "Error: model overloaded" });
    } finally {
      await harness.dispose();
    }
  });

  it("a ToolExecutionError reaches the model as a failed call and is not retried", async () => {
    let runs = 0;
    const runner = new ScriptedAgentRunner((input) => input.modelCall === 1
      ? { toolCalls: [{ name: "lookup_order", arguments: { order_id: "x" } }] }
      : { text: `${input.previousResults[0]?.status}: ${input.previousResults[0]?.output}` }, {
      lookup_order: { effect: "read", execute: async () => { runs += 1; throw new ToolExecutionError("no such order x"); } },
    });
    const flow = createAgentSessionFlow(runner, "ToolErrors");
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "t1", { initial_message: "x?" });
      await waitForTurns(harness, "t1", 1);
      assert.equal((await harness.client.invokeRPC(flow.getAgentSnapshot, "t1")).messages.at(-1)?.text, "failed: The tool call failed: no such order x");
      assert.equal(runs, 1);
    } finally {
      await harness.dispose();
    }
  });

  it("session tool policies win over the framework's metadata", async () => {
    const runner = new ScriptedAgentRunner((input) => input.modelCall === 1
      ? { toolCalls: [{ name: "lookup_order", arguments: { order_id: "1" } }] }
      : { text: "ok" }, { lookup_order: lookupOrder });
    const flow = createAgentSessionFlow(runner, "Policies", { toolPolicies: { lookup_order: { effect: "non_idempotent_write" } } });
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "pol1", { initial_message: "hi" });
      const snapshot = await pollUntil(async () => {
        const found = await harness.client.invokeRPC(flow.getAgentSnapshot, "pol1");
        return found.pendingInterrupts.length > 0 ? found : undefined;
      });
      assert.equal(snapshot.toolCalls[0]?.effect, "non_idempotent_write");
      assert.equal(snapshot.toolCalls[0]?.requiresApproval, true);
    } finally {
      await harness.dispose();
    }
  });

  it("a blank first message starts no turn; a non-string or oversized one is refused at start", async () => {
    const runner = new ScriptedAgentRunner(() => ({ text: "hi" }));
    const flow = createAgentSessionFlow(runner, "StartInput", { maxUserMessageBytes: 100 });
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "b1", { initial_message: " \n " });
      await pollUntil(async () => (await harness.client.describe("b1")).executions.some((execution) => execution.stepType === "AwaitUserMessage"));
      const [state] = await harness.client.getAttributes("b1", flow.agentState);
      assert.equal(state?.turnCount, 0);
      assert.equal(runner.modelCalls, 0);
      await assert.rejects(harness.client.start(flow, "b2", { initial_message: 7 }), (error: unknown) =>
        InvalidInputError.isInstance(error) && /initial_message must be a string or null, got 7/.test(error.message));
      await assert.rejects(harness.client.start(flow, "b3", { initial_message: "z".repeat(101) }), /initial_message of 101 bytes is over the session's maxUserMessageBytes of 100/);
      await assert.rejects(harness.client.describe("b3"), /no Flow has ID "b3"/);
    } finally {
      await harness.dispose();
    }
  });

  it("a runner outcome that breaks the contract fails the turn at once, without retrying the model call", async () => {
    const runner = new ScriptedAgentRunner(() => ({ text: "unused" }));
    runner.runModelStep = async () => ({ kind: "tool_calls_requested", frameworkRunState: "x", usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, reasoningTokens: 0, cachedInputTokens: 0, requests: 1 }, toolCalls: [{ toolCallId: "c1", toolName: "t", arguments: "{}" } as never] });
    const flow = createAgentSessionFlow(runner, "BadOutcome");
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "o1", { initial_message: "go" });
      const state = await harness.waitForState("o1", (candidate) => candidate.lastTurnError !== null, "the turn to fail");
      assert.match(state.lastTurnError ?? "", /^TerminalError: runModelStep returned tool call c1 without a resolved policy/);
      const history = await harness.client.getStepHistory("o1");
      assert.equal(history.filter((entry) => entry.stepType === "RunModel" && entry.status === "failed").length, 1);
    } finally {
      await harness.dispose();
    }
  });
});
