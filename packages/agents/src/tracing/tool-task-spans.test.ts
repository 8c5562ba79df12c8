/**
 * A tool task's spans: the `CallTool` attempt that starts the task and each
 * `PollToolTask` attempt get an `execute_tool` span of their own, all under
 * the activation root copied onto the call's record.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pollUntil } from "@perdure/engine/testing";
import type { ToolTaskPollOutcome } from "../contract/agent-framework-runner.ts";
import { createStepwiseAgentSessionFlow } from "../stepwise/create-stepwise-agent-session-flow.ts";
import { functionTool } from "../stepwise/function-tool.ts";
import { ScriptedModelClient } from "../stepwise/scripted-model-client.ts";
import { startStepwiseTestAgent } from "../stepwise/test-fixtures/stepwise-test-agent.ts";
import { parentSpanIdOf, startInMemoryTracing } from "./test-fixtures/in-memory-tracing.ts";

test("a tool task gives one execute_tool span to the CallTool that starts it and one to each PollToolTask, all under the turn's root", { timeout: 300_000 }, async (t) => {
  const tracing = startInMemoryTracing();
  t.after(() => tracing.shutdown());
  let polls = 0;
  const tool = functionTool({
    name: "build_report", description: "Builds a report.", parameters: { type: "object", properties: {} }, effect: "read",
    execute: async () => ({ kind: "tool_task_started", taskId: "job-1", pollIntervalSeconds: 1 }),
    pollTask: async (): Promise<ToolTaskPollOutcome> => {
      polls += 1;
      return polls === 1 ? { kind: "tool_task_pending", pollIntervalSeconds: 60 } : { output: "the report" };
    },
  });
  const model = new ScriptedModelClient((request) => ScriptedModelClient.toolResults(request).length > 0
    ? { text: "Here is the report." }
    : { text: "Starting.", toolCalls: [{ name: "build_report", id: "report" }] });
  const flow = createStepwiseAgentSessionFlow({ name: "reports", instructions: "Report.", model, tools: [tool], tracing: { tracerProvider: tracing.provider, agentName: "Reports" } }, "TracedToolTask");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("t1", { initialMessage: "Build the report." });
  // The first poll answers "pending, ask again in 60 s"; firing that Timer now runs the second poll. The
  // record's interval is committed a Step before the next poll's Timer exists, so this waits for the Timer itself.
  await pollUntil(async () => (polls === 1 && (await sessions.getAgentSnapshot("t1")).toolCalls[0]?.taskPollIntervalSeconds === 60 ? true : undefined), { description: "the first poll" });
  await pollUntil(async () => ((await sessions.skipToolTaskPoll("t1", "report")) === 1 ? true : undefined), { description: "the second poll's Timer, skipped" });
  await sessions.waitForTurnCount("t1", 1);

  const [root] = tracing.spansNamed("invoke_agent Reports");
  assert.ok(root !== undefined);
  const toolSpans = tracing.spansNamed("execute_tool build_report");
  assert.deepEqual(toolSpans.map((span) => span.attributes["perdure.step.type"]), ["CallTool", "PollToolTask", "PollToolTask"]);
  assert.equal(new Set(toolSpans.map((span) => span.attributes["perdure.step.execution_id"])).size, 3, "each poll is a Step execution of its own");
  for (const span of toolSpans) {
    assert.equal(parentSpanIdOf(span), root.spanContext().spanId);
    assert.equal(span.spanContext().traceId, root.spanContext().traceId);
    assert.equal(span.attributes["gen_ai.tool.call.id"], "report");
    assert.equal(span.attributes["perdure.agent.turn.id"], "turn-1");
  }
});
