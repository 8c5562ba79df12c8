/**
 * `@perdure/agents-openai-agents`: run an OpenAI Agents SDK agent as a
 * durable Perdure session.
 *
 * @example
 * import { createOpenAiAgentsSessionFlow } from "@perdure/agents-openai-agents";
 * export const supportFlow = createOpenAiAgentsSessionFlow(supportAgent, "SupportAgent");
 */
export { createOpenAiAgentsSessionFlow } from "./create-openai-agents-session-flow.ts";
export type { OpenAiAgentsSessionOptions } from "./create-openai-agents-session-flow.ts";
export { OpenAiAgentsRunner } from "./openai-agents-runner.ts";
export type { OpenAiAgentsRunnerOptions } from "./openai-agents-runner.ts";
export { currentToolExecution } from "@perdure/agents";
