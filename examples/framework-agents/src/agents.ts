/**
 * The entry `perdure dev` serves: the same order desk written with several
 * frameworks, each a durable session through its adapter.
 *
 *   npm start --workspace @perdure/example-framework-agents
 */
export { vercelAiOrderDeskFlow } from "./vercel-ai-agent.ts";
export { openAiOrderDeskFlow } from "./openai-agents-agent.ts";
export { mastraOrderDeskFlow } from "./mastra-agent.ts";
export { claudeOrderDeskFlow } from "./claude-agent-sdk-agent.ts";
