/** Row 9: `prepareStep`, as the AI SDK's loop-control docs use it to switch models. */
import { openai } from "@ai-sdk/openai";
import { ToolLoopAgent } from "ai";
import { createVercelAiAgentSessionFlow } from "@perdure/agents-vercel-ai";

const agent = new ToolLoopAgent({
  model: openai("gpt-5-mini"),
  instructions: "You help customers with their orders.",
  prepareStep: async ({ stepNumber }) => (stepNumber > 2 ? { model: openai("gpt-5") } : {}),
});

export const aiSdkAgent = createVercelAiAgentSessionFlow(agent, "UserAiSdkPrepareStepAgent");
