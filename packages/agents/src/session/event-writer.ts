import type { StepContext } from "@perdure/engine";
import type { AgentEventType, AgentEventWriter } from "../contract/values/agent-event.ts";
import type { AgentSessionPersistence } from "./persistence.ts";
import { agentMetrics } from "../metrics/agent-metrics.ts";

/** An event writer bound to this Step attempt and turn. A failed Stream write is logged once and never fails the Step. */
export function createEventWriter(context: StepContext, persistence: AgentSessionPersistence, turnId: string | null): AgentEventWriter {
  const write = async (type: AgentEventType, payload: Record<string, unknown>): Promise<void> => {
    try {
      await context.writeStream(persistence.agentEvents, { type, turnId, attempt: context.attempt, stepExecutionId: context.executionId, payload });
    } catch (error) {
      console.warn(`perdure agents: dropped ${type} event of ${context.flowId}:`, error);
    }
    agentMetrics.eventWritten(context.flowType, context.flowId, type, turnId, payload, context.now());
  };
  return {
    write,
    textDelta: (text) => write("text_delta", { text }),
    reasoningDelta: (text) => write("reasoning_delta", { text }),
  };
}

/** Heartbeats every 20 seconds while `work` runs, so a silent model or tool stays within its heartbeat timeout. */
export async function withBackgroundHeartbeat<TResult>(context: StepContext, work: () => Promise<TResult>): Promise<TResult> {
  const timer = setInterval(() => {
    context.heartbeat().catch((error: unknown) => console.warn(`perdure agents: heartbeat of ${context.flowId} failed:`, error));
  }, 20_000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
