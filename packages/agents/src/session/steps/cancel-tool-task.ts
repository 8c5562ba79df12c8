/**
 * `CancelToolTask`: abandons a started tool task of a cancelled turn. It asks
 * the runner's `cancelToolTask` to stop the remote work, best-effort, then
 * records `outcome_unknown` with `cancellationReason` `"turn_cancelled"`;
 * when the runner keeps failing, `RecordToolOutcomeUnknown` records it.
 */
import { deadEnd, defineStep, type StepDefinition } from "@perdure/engine";
import type { ToolTaskCancellation } from "../../contract/agent-framework-runner.ts";
import { isFinalToolCallStatus } from "../../contract/values/agent-tool-call.ts";
import { outcomeUnknownToolResult, toolTaskAbandonedError } from "../../contract/values/result-texts.ts";
import { createEventWriter } from "../event-writer.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { finishToolCall, readToolCallIfStored } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { parseToolCallId } from "./tool-step-input.ts";

export function createCancelToolTaskStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence, runner } = environment;
  return defineStep<unknown>(AgentStepType.CancelToolTask, {
    load: (input) => [persistence.agentToolCalls.instance(parseToolCallId(input))],
    failureRoute: AgentStepType.RecordToolOutcomeUnknown,
    executeOptions: { timeoutMs: 30_000, retry: { maximumAttempts: 3, totalDurationMs: 2 * 60_000 } },
    execute: async (context, input) => {
      const record = readToolCallIfStored(context, persistence, parseToolCallId(input));
      // FinishTurnCancellation and the task's own Step may both hand it over; the first to commit records it.
      if (record === undefined || isFinalToolCallStatus(record.status)) return deadEnd();
      if (runner.cancelToolTask !== undefined && record.taskId !== undefined) {
        const cancellation: ToolTaskCancellation = {
          flowId: context.flowId, toolCall: record, idempotencyKey: `${context.flowId}/${record.turnId}/${record.toolCallId}`,
          attempt: context.attempt, cancellationSignal: context.cancellationSignal, deadline: context.deadline,
        };
        await runner.cancelToolTask(cancellation);
      }
      const events = createEventWriter(context, persistence, record.turnId);
      await finishToolCall(context, persistence, { ...record, cancellationReason: "turn_cancelled" }, "outcome_unknown", {
        output: outcomeUnknownToolResult, error: toolTaskAbandonedError,
      }, events);
      return deadEnd();
    },
  });
}
