/**
 * Row 9: a Mastra agent with memory. Mastra's docs give it `new Memory()`
 * from @mastra/memory; this repository does not install that package, so
 * the agent takes Mastra's own in-memory `MockMemory`, which the adapter
 * sees the same way (`agent.hasOwnMemory()`).
 */
import { openai } from "@ai-sdk/openai";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { MockMemory } from "@mastra/core/memory";
import { createMastraAgentSessionFlow } from "@perdure/agents-mastra";

const agent = new Agent<string>({
  id: "order-desk",
  name: "Order desk",
  instructions: "You help customers with their orders.",
  model: openai("gpt-5-mini") as unknown as MastraModelConfig,
  memory: new MockMemory(),
});

export const mastraAgent = createMastraAgentSessionFlow(agent, "UserMastraMemoryAgent");
