/**
 * `@perdure/agents-vercel-ai`: run an agent written with the Vercel AI SDK
 * as a durable Perdure session.
 *
 * @example
 * import { createVercelAiAgentSessionFlow } from "@perdure/agents-vercel-ai";
 * export const supportFlow = createVercelAiAgentSessionFlow(supportAgent, "SupportAgent");
 */
export { createVercelAiAgentSessionFlow } from "./create-vercel-ai-agent-session-flow.ts";
export type { VercelAiAgent, VercelAiAgentSessionOptions, VercelAiAgentSettings } from "./create-vercel-ai-agent-session-flow.ts";
export { currentToolExecution } from "@perdure/agents";
export { toolApprovalOf } from "./vercel-ai-tools.ts";
