import type { Agent } from "@openai/agents";
import { createAgentSessionFlow, type AgentSessionFlow, type AgentSessionOptions } from "@perdure/agents";
import { OpenAiAgentsRunner, type OpenAiAgentsRunnerOptions } from "./openai-agents-runner.ts";

/** Options of {@link createOpenAiAgentsSessionFlow}: the session's options and the runner's. */
export interface OpenAiAgentsSessionOptions extends AgentSessionOptions, OpenAiAgentsRunnerOptions {}

/**
 * Makes the session Flow of an OpenAI Agents SDK agent.
 *
 * @example
 * import { Agent, tool } from "@openai/agents";
 * import { createOpenAiAgentsSessionFlow } from "@perdure/agents-openai-agents";
 *
 * const agent = new Agent({ name: "support", instructions: "You help customers.", model: "gpt-5-mini", tools: [lookupOrder, refundOrder] });
 * export const supportFlow = createOpenAiAgentsSessionFlow(agent, "SupportAgent", {
 *   toolPolicies: { lookup_order: { effect: "read" }, refund_order: { effect: "non_idempotent_write" } },
 * });
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any agent, whatever its context and output type
export function createOpenAiAgentsSessionFlow(agent: Agent<any, any>, flowType: string, options: OpenAiAgentsSessionOptions = {}): AgentSessionFlow {
  const { runConfig, agentTools, ...sessionOptions } = options;
  const runnerOptions = { ...(runConfig === undefined ? {} : { runConfig }), ...(agentTools === undefined ? {} : { agentTools }) };
  return createAgentSessionFlow(new OpenAiAgentsRunner(agent, runnerOptions), flowType, sessionOptions);
}
