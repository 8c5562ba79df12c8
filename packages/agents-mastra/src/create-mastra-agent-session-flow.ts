/** `createMastraAgentSessionFlow`: a Mastra agent as a durable session. */
import { createAgentSessionFlow, type AgentSessionFlow, type AgentSessionOptions } from "@perdure/agents";
import { MastraAgentRunner, type AnyMastraAgent, type MastraAgentRunnerOptions } from "./mastra-agent-runner.ts";

/** Options of {@link createMastraAgentSessionFlow}: the session's options and the runner's. */
export interface MastraAgentSessionOptions extends AgentSessionOptions, MastraAgentRunnerOptions {}

/**
 * Makes the session Flow of a Mastra agent.
 *
 * @example
 * import { Agent } from "@mastra/core/agent";
 * import { createMastraAgentSessionFlow } from "@perdure/agents-mastra";
 *
 * const agent = new Agent({ id: "support", name: "support", instructions: "You help customers.", model, tools: { lookupOrder, refundOrder } });
 * export const supportFlow = createMastraAgentSessionFlow(agent, "SupportAgent", {
 *   toolPolicies: { lookupOrder: { effect: "read" }, refundOrder: { effect: "non_idempotent_write" } },
 * });
 */
export function createMastraAgentSessionFlow(agent: AnyMastraAgent, flowType: string, options: MastraAgentSessionOptions = {}): AgentSessionFlow {
  const { createRequestContext, agentTools, ...sessionOptions } = options;
  const runnerOptions = { ...(createRequestContext === undefined ? {} : { createRequestContext }), ...(agentTools === undefined ? {} : { agentTools }) };
  return createAgentSessionFlow(new MastraAgentRunner(agent, runnerOptions), flowType, sessionOptions);
}
