import { createAgentSessionFlow, type AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import type { AgentSessionOptions } from "../session/session-options.ts";
import type { AgentDefinition } from "./agent-definition.ts";
import { StepwiseAgentRunner } from "./stepwise-agent-runner.ts";

/**
 * Builds the session Flow of a Stepwise agent: a `StepwiseAgentRunner` and
 * session options derived from the definition.
 *
 * @example
 * export const supportAgentFlow = createStepwiseAgentSessionFlow(
 *   { name: "support", instructions: "You help customers with their orders.", model, tools: [lookupOrder, refundOrder] },
 *   "SupportAgent",
 * );
 */
export function createStepwiseAgentSessionFlow(definition: AgentDefinition, flowType: string): AgentSessionFlow {
  const runner = new StepwiseAgentRunner(definition);
  const options: AgentSessionOptions = {
    toolPolicies: runner.definition.toolPolicies,
    defaultToolEffect: runner.definition.defaultToolEffect,
    builtInTools: runner.definition.builtInTools,
    planModeEnabled: runner.definition.planModeEnabled,
    ...(definition.maxDurableWaitMs === undefined ? {} : { maxDurableWaitMs: definition.maxDurableWaitMs }),
    ...(definition.interruptDeadlineMs === undefined ? {} : { interruptDeadlineMs: definition.interruptDeadlineMs }),
    ...(definition.compaction === undefined ? {} : { compaction: definition.compaction }),
    ...(definition.eventStreamCapacityBytes === undefined ? {} : { eventStreamCapacityBytes: definition.eventStreamCapacityBytes }),
    ...(definition.tracing === undefined ? {} : { tracing: definition.tracing }),
  };
  return createAgentSessionFlow(runner, flowType, options);
}
