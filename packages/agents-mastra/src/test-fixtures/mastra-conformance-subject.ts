/**
 * The Mastra adapter as a subject of the runner conformance tests: an
 * `Agent` on the scripted AI SDK mock model, the neutral tools as Mastra
 * `createTool` tools that read their idempotency key from the request
 * context, their framework approval as `requireApproval`. The inline write
 * option is the refund tool's `requireApproval: false`.
 */
import { fileURLToPath } from "node:url";
import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import type { RunnerConformanceSubject } from "@perdure/agents/testing";
import { asMastraModel, conformanceLanguageModel } from "./scripted-language-model.ts";
import { createMastraAgentSessionFlow } from "../create-mastra-agent-session-flow.ts";
import { idempotencyKeyRequestContextKey } from "../idempotency-key.ts";

export const mastraConformanceSubject: RunnerConformanceSubject = {
  name: "Mastra adapter",
  createFlow: (setup) => {
    const approvalOf = (neutral: (typeof setup.tools)[number]) => (setup.inlineWriteOption === true && neutral.name === "refund_order" ? false : neutral.frameworkApproval);
    const tools = Object.fromEntries(setup.tools.map((neutral) => [neutral.name, createTool({
      id: neutral.name,
      description: neutral.description,
      inputSchema: neutral.parameters as never,
      ...(approvalOf(neutral) === undefined ? {} : { requireApproval: approvalOf(neutral) as boolean | ((input: unknown) => boolean) as never }),
      execute: async (input, context) => {
        const key: unknown = context.requestContext?.get(idempotencyKeyRequestContextKey);
        if (typeof key !== "string") throw new Error(`${neutral.name} ran outside a durable tool Step`);
        return neutral.execute(input as Record<string, unknown>, { idempotencyKey: key });
      },
    })]));
    const agent = new Agent<string>({ id: "conformance", name: "conformance", instructions: setup.instructions, model: asMastraModel(conformanceLanguageModel(setup.model)), tools });
    const toolPolicies = Object.fromEntries(setup.tools.map((neutral) => [neutral.name, { effect: neutral.effect }]));
    return createMastraAgentSessionFlow(agent, setup.flowType, { toolPolicies, builtInTools: [...setup.builtInTools] });
  },
  workerEntryModulePath: fileURLToPath(new URL("./mastra-conformance-worker-main.ts", import.meta.url)),
  inlineWriteOption: "requireApproval: false",
};
