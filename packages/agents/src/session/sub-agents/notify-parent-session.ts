/**
 * `NotifyParentSession`: when a child session's turn ends, fires the Timer
 * its parent's tool call waits on, so the parent reads the child's answer at
 * once. It runs beside `AwaitUserMessage` and holds nothing. Until the
 * parent's wait exists (the child can finish before the parent's commit that
 * starts it, or while a crashed parent's tool Step runs again), it tries
 * again, a bounded number of times; the parent's own safety poll covers the
 * rest.
 */
import { deadEnd, defineStep, type StepDefinition } from "@perdure/engine";
import { isFinalToolCallStatus } from "../../contract/values/agent-tool-call.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { AgentStepType } from "../step-types.ts";
import { toolTaskPollTimerId } from "../steps/poll-tool-task.ts";
import { subAgentClient } from "./parent-session.ts";

const notifyAttempts = 20;

export function createNotifyParentSessionStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence } = environment;
  return defineStep<unknown>(AgentStepType.NotifyParentSession, {
    executeOptions: { retry: { maximumAttempts: notifyAttempts, initialIntervalMs: 100, maximumIntervalMs: 2000 } },
    execute: async (context) => {
      const link = context.read(persistence.parentSession);
      const client = subAgentClient(context.flowType);
      if (link === undefined || client === undefined) return deadEnd();
      const fired = await client.skipTimer(link.sessionId, toolTaskPollTimerId(link.toolCallId));
      if (fired > 0) return deadEnd();
      // No Timer: the parent read this session already (its call is final or its turn ended), or its wait is not set yet.
      const [call] = await client.getAttributes(link.sessionId, persistence.agentToolCalls.instance(link.toolCallId));
      if (call !== undefined && !isFinalToolCallStatus(call.status) && context.attempt < notifyAttempts) throw new Error(`parent session ${link.sessionId} does not wait on tool call ${link.toolCallId} yet`);
      return deadEnd();
    },
  });
}
