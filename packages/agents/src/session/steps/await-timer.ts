/** `AwaitTimer`: a `durable_wait` call waits on an engine Timer until its `waitUntil`, holding no Worker. */
import { anyOf, deadEnd, defineStep, received, timer, type StepDefinition } from "@perdure/engine";
import { isFinalToolCallStatus } from "../../contract/values/agent-tool-call.ts";
import { recordCancelledCall } from "./turn-control-checks.ts";
import { checkDurableWaitArguments } from "../built-in-tools/built-in-tool-arguments.ts";
import { durableWaitTimerId } from "../built-in-tools/durable-wait-timer.ts";
import { createEventWriter } from "../event-writer.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { finishToolCall, readToolCall } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { parseToolCallId, recordRetry } from "./tool-step-input.ts";

export function createAwaitTimerStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence } = environment;
  return defineStep<unknown>(AgentStepType.AwaitTimer, {
    load: (input) => [persistence.agentToolCalls.instance(parseToolCallId(input))],
    executeOptions: { retry: recordRetry },
    waitUntil: (context, input) => {
      const record = readToolCall(context, persistence, parseToolCallId(input));
      // waitUntil is on the store's clock (RunModel's commit time plus the duration), the clock Timers fire on.
      const at = Date.parse(record.waitUntil ?? "");
      const due = Number.isFinite(at) ? timer(durableWaitTimerId(record.toolCallId), { at }) : timer(durableWaitTimerId(record.toolCallId), { afterMs: 0 });
      // A Timer that fires first wins over a cancellation: the call keeps its own result.
      return anyOf(due, received(persistence.toolCallCancellations.instance(record.toolCallId)));
    },
    execute: async (context, input) => {
      const record = readToolCall(context, persistence, parseToolCallId(input));
      const events = createEventWriter(context, persistence, record.turnId);
      if (isFinalToolCallStatus(record.status)) return deadEnd();
      const [cancelled] = context.consumed(persistence.toolCallCancellations.instance(record.toolCallId));
      if (cancelled !== undefined && !context.timerFired(durableWaitTimerId(record.toolCallId))) {
        await recordCancelledCall(context, environment, record, cancelled.message.reason, events);
        return deadEnd();
      }
      // RunModel checked these arguments before it moved here; a smaller maxDurableWaitMs after a deploy must not fail a wait that already ran.
      const checked = checkDurableWaitArguments(record.arguments, Number.MAX_SAFE_INTEGER);
      const waited = checked.ok ? checked.value : { durationSeconds: 0, reason: "" };
      const output = JSON.stringify({ status: "completed", waited_seconds: waited.durationSeconds, reason: waited.reason });
      await finishToolCall(context, persistence, record, "succeeded", { output, error: null }, events);
      return deadEnd();
    },
  });
}
