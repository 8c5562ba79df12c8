import { createAgentSessionFlow, type AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import type { MessageStorageOptions } from "../session/messages/message-storage-options.ts";
import type { AgentSessionOptions } from "../session/session-options.ts";
import type { AgentDefinition } from "./agent-definition.ts";
import { StepwiseAgentRunner } from "./stepwise-agent-runner.ts";

/** The definition's message storage fields that are set, as session options. */
function messageStorageOptionsOf(definition: AgentDefinition): MessageStorageOptions {
  const options: MessageStorageOptions = {};
  if (definition.messageWindowSize !== undefined) options.messageWindowSize = definition.messageWindowSize;
  if (definition.messageChunkSize !== undefined) options.messageChunkSize = definition.messageChunkSize;
  if (definition.messageChunkMaxBytes !== undefined) options.messageChunkMaxBytes = definition.messageChunkMaxBytes;
  if (definition.retainedMessageLimit !== undefined) options.retainedMessageLimit = definition.retainedMessageLimit;
  return options;
}

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
    ...(definition.maxSubAgentsPerTurn === undefined ? {} : { maxSubAgentsPerTurn: definition.maxSubAgentsPerTurn }),
    ...(definition.compaction === undefined ? {} : { compaction: definition.compaction }),
    ...(definition.eventStreamCapacityBytes === undefined ? {} : { eventStreamCapacityBytes: definition.eventStreamCapacityBytes }),
    ...(definition.tracing === undefined ? {} : { tracing: definition.tracing }),
    ...messageStorageOptionsOf(definition),
  };
  return createAgentSessionFlow(runner, flowType, options);
}
