/**
 * `@perdure/agents-mastra`: run a Mastra agent as a durable Perdure session.
 *
 * @example
 * import { createMastraAgentSessionFlow } from "@perdure/agents-mastra";
 * export const supportFlow = createMastraAgentSessionFlow(supportAgent, "SupportAgent");
 */
export { createMastraAgentSessionFlow } from "./create-mastra-agent-session-flow.ts";
export type { MastraAgentSessionOptions } from "./create-mastra-agent-session-flow.ts";
export { MastraAgentRunner } from "./mastra-agent-runner.ts";
export type { AnyMastraAgent, MastraAgentRunnerOptions } from "./mastra-agent-runner.ts";
export { idempotencyKeyRequestContextKey } from "./idempotency-key.ts";
export { currentToolExecution } from "@perdure/agents";
