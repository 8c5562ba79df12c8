/** Row 9: structured output, as the AI SDK's agent docs add it. */
import { openai } from "@ai-sdk/openai";
import { Output, ToolLoopAgent } from "ai";
import { z } from "zod";
import { createVercelAiAgentSessionFlow } from "@perdure/agents-vercel-ai";

const agent = new ToolLoopAgent({
  model: openai("gpt-5-mini"),
  instructions: "You summarize orders.",
  output: Output.object({ schema: z.object({ summary: z.string() }) }),
});

export const aiSdkAgent = createVercelAiAgentSessionFlow(agent, "UserAiSdkOutputAgent");
