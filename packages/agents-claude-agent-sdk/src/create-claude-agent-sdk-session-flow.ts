/** `createClaudeAgentSdkSessionFlow`: an agent on the Claude Agent SDK as a durable session. */
import { createAgentSessionFlow, type AgentSessionFlow, type AgentSessionOptions } from "@perdure/agents";
import { ClaudeAgentSdkRunner, type ClaudeAgentSdkAgent, type ClaudeAgentSdkRunnerOptions } from "./claude-agent-sdk-runner.ts";

/** Options of {@link createClaudeAgentSdkSessionFlow}: the session's options and the runner's. */
export interface ClaudeAgentSdkSessionOptions extends AgentSessionOptions, ClaudeAgentSdkRunnerOptions {}

/**
 * Makes the session Flow of an agent that the Claude Agent SDK runs.
 *
 * @example
 * import { tool } from "@anthropic-ai/claude-agent-sdk";
 * import { createClaudeAgentSdkSessionFlow } from "@perdure/agents-claude-agent-sdk";
 *
 * export const supportFlow = createClaudeAgentSdkSessionFlow({ systemPrompt: "You help customers.", tools: [lookupOrder, refundOrder] }, "SupportAgent", {
 *   queryOptions: { model: "claude-sonnet-5-5" },
 *   toolPolicies: { lookup_order: { effect: "read" }, refund_order: { effect: "non_idempotent_write" } },
 * });
 */
export function createClaudeAgentSdkSessionFlow(agent: ClaudeAgentSdkAgent, flowType: string, options: ClaudeAgentSdkSessionOptions = {}): AgentSessionFlow {
  const { queryOptions, readToolsRunInHarness, ...sessionOptions } = options;
  const runnerOptions: ClaudeAgentSdkRunnerOptions = {
    ...(queryOptions === undefined ? {} : { queryOptions }),
    ...(readToolsRunInHarness === undefined ? {} : { readToolsRunInHarness }),
  };
  const runner = new ClaudeAgentSdkRunner(agent, runnerOptions);
  runner.checkQueryOptions(sessionOptions.toolPolicies ?? {}, sessionOptions.defaultToolEffect ?? "unclassified");
  return createAgentSessionFlow(runner, flowType, sessionOptions);
}
