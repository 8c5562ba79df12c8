import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidInputError } from "@perdure/engine";
import { pollUntil } from "@perdure/engine/testing";
import type { AgentFrameworkRunner, AgentTurnContext, AgentTurnOutcome } from "../contract/agent-framework-runner.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { emptyAgentUsage } from "../contract/values/agent-usage.ts";
import { createAgentSessionFlow } from "./create-agent-session-flow.ts";
import { startSessionHarness, waitForTurns } from "./test-fixtures/session-harness.ts";

/** A runner of its own (not Stepwise) that asks and waits through the built-in tools, with a policy the session must override. */
class BuiltInCallingRunner implements AgentFrameworkRunner {
  readonly offered: string[][] = [];

  buildUserMessage(text: string) {
    return { role: "user" as const, text, frameworkItem: { type: "user_text", text } };
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    this.offered.push((turn.enabledBuiltInTools ?? []).map((tool) => tool.name));
    const usage = emptyAgentUsage();
    if (turn.toolCalls.length > 0) {
      const text = turn.toolCalls.map((call) => `${call.toolName}: ${call.output ?? ""}`).join(" | ");
      return { kind: "turn_completed", newMessages: [{ role: "assistant", text, frameworkItem: { text } }], usage };
    }
    return {
      kind: "tool_calls_requested", frameworkRunState: "1", usage,
      toolCalls: [
        { toolCallId: "ask", toolName: "ask_user", arguments: '{"question": "Why?"}', policy: { effect: "non_idempotent_write", requiresApproval: true } },
        { toolCallId: "nap", toolName: "durable_wait", arguments: '{"duration_seconds": 3600, "reason": "nap"}', policy: turn.resolveToolPolicy("durable_wait") },
      ],
    };
  }

  executeDeferredToolCall(): Promise<{ output: string }> {
    return Promise.reject(new Error("a built-in call never reaches the runner"));
  }
}

test("any runner gets the enabled built-in tools, and the session handles their calls with the fixed policy read, no approval", async () => {
  const runner = new BuiltInCallingRunner();
  const flow = createAgentSessionFlow(runner, "BuiltInsAnyRunner", { builtInTools: ["durable_wait", "ask_user"] });
  const harness = await startSessionHarness([flow]);
  try {
    const sessions = new AgentSessionTestClient(harness.client, flow);
    await sessions.start("b1", { initialMessage: "Go." });
    const [question] = await sessions.waitForPendingInterrupts("b1");
    assert.deepEqual([question?.interruptId, question?.kind], ["ask", "question"], "no approval interrupt: the runner's policy does not apply");
    const waiting = await sessions.getAgentSnapshot("b1");
    assert.deepEqual(waiting.toolCalls.map((call) => [call.toolCallId, call.effect, call.requiresApproval, call.status]), [
      ["ask", "read", false, "awaiting_answer"], ["nap", "read", false, "waiting_for_timer"],
    ]);
    assert.equal(await sessions.answerQuestion("b1", { interruptId: "ask", answer: "Because." }), true);
    await pollUntil(async () => ((await sessions.skipTimer("b1", "nap")) === 1 ? true : undefined), { description: "the nap's Timer" });
    await waitForTurns(harness, "b1", 1);
    assert.deepEqual(runner.offered, [["ask_user", "durable_wait"], ["ask_user", "durable_wait"]], "offered in one fixed order");
    assert.equal((await sessions.getAgentSnapshot("b1")).messages.at(-1)?.text,
      'ask_user: {"status":"answered","answer":"Because."} | durable_wait: {"status":"completed","waited_seconds":3600,"reason":"nap"}');
  } finally {
    await harness.dispose();
  }
});

test("session options: built-in names, maxDurableWaitMs and planModeEnabled are checked when the Flow is built", () => {
  const runner = new BuiltInCallingRunner();
  const refused = (options: Parameters<typeof createAgentSessionFlow>[2], message: RegExp) =>
    assert.throws(() => createAgentSessionFlow(runner, "Refused", options), (error: unknown) => InvalidInputError.isInstance(error) && message.test((error as Error).message));
  refused({ builtInTools: ["durable_wait"], toolPolicies: { durable_wait: { effect: "read" } } }, /^toolPolicies\.durable_wait is refused: durable_wait is an enabled built-in tool/);
  refused({ maxDurableWaitMs: 1500 }, /maxDurableWaitMs 1500 is invalid: use a positive multiple of 1000/);
  refused({ maxDurableWaitMs: 0 }, /maxDurableWaitMs 0 is invalid/);
  refused({ planModeEnabled: true }, /^planModeEnabled needs "write_todos" in builtInTools/);
  refused({ builtInTools: ["write_todos"], planModeEnabled: true }, /^planModeEnabled needs a runner whose supportsPlanMode is true/);
  assert.doesNotThrow(() => createAgentSessionFlow(runner, "PolicyWithoutBuiltIn", { toolPolicies: { ask_user: { effect: "read" } } }), "a name is reserved only while enabled");
});
