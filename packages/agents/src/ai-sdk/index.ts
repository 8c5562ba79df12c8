/**
 * `@perdure/agents/ai-sdk`: a Stepwise `ModelClient` for any Vercel AI SDK
 * `LanguageModel`. Needs the optional peer dependency `ai` (`^7.0.159`) and a
 * provider package; importing this entry without `ai` installed fails with
 * `Cannot find package 'ai'`.
 *
 * @example
 * import { openai } from "@ai-sdk/openai";
 * import { createAiSdkModelClient } from "@perdure/agents/ai-sdk";
 * import { createStepwiseAgentSessionFlow } from "@perdure/agents/stepwise";
 *
 * export const supportAgentFlow = createStepwiseAgentSessionFlow(
 *   { name: "support", instructions: "You help customers with their orders.", model: createAiSdkModelClient(openai("gpt-5-mini")) },
 *   "SupportAgent",
 * );
 */
export { createAiSdkModelClient } from "./ai-sdk-model-client.ts";
export type { AiSdkModelClientOptions } from "./ai-sdk-model-client.ts";
