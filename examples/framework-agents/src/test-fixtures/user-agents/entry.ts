/** The entry `perdure dev` serves in the user-agents tests: one agent per framework. */
export { aiSdkAgent } from "./ai-sdk-agent.ts";
export { openAiAgentsAgent } from "./openai-agents-agent.ts";
export { mastraAgent } from "./mastra-agent.ts";
export { claudeAgent } from "./claude-agent.ts";
