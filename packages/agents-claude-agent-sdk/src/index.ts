/**
 * `@perdure/agents-claude-agent-sdk`: run an agent on the Claude Agent SDK
 * (the Claude Code harness) as a durable Perdure session.
 *
 * @example
 * import { createClaudeAgentSdkSessionFlow } from "@perdure/agents-claude-agent-sdk";
 * export const supportFlow = createClaudeAgentSdkSessionFlow({ systemPrompt, tools: [lookupOrder, refundOrder] }, "SupportAgent");
 */
export { createClaudeAgentSdkSessionFlow } from "./create-claude-agent-sdk-session-flow.ts";
export type { ClaudeAgentSdkSessionOptions } from "./create-claude-agent-sdk-session-flow.ts";
export { ClaudeAgentSdkRunner } from "./claude-agent-sdk-runner.ts";
export type { ClaudeAgentSdkAgent, ClaudeAgentSdkRunnerOptions } from "./claude-agent-sdk-runner.ts";
export { currentToolExecution } from "@perdure/agents";
export { zodRawShapeFromJsonSchema } from "./zod-raw-shape.ts";
export { claudeToolServerName } from "./claude-tools.ts";
export type { ClaudeSdkTool, ClaudeToolApproval } from "./claude-tools.ts";
export { ClaudeQueryOptionRefusedError } from "./claude-query-option-refused-error.ts";
