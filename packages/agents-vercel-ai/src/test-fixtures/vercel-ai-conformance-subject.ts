/**
 * The AI SDK adapter as a subject of the runner conformance tests: a
 * `ToolLoopAgent` on the scripted mock model, the neutral tools as AI SDK
 * tools that read their idempotency key from `currentToolExecution()`,
 * their framework approval as `needsApproval`. The inline write option is
 * the refund tool's `needsApproval: false`.
 */
import { fileURLToPath } from "node:url";
import { jsonSchema, tool, ToolLoopAgent, type JSONSchema7, type ToolSet } from "ai";
import type { RunnerConformanceSetup, RunnerConformanceSubject } from "@perdure/agents/testing";
import { createVercelAiAgentSessionFlow } from "../create-vercel-ai-agent-session-flow.ts";
import { currentToolExecution } from "@perdure/agents";
import { conformanceLanguageModel } from "./conformance-language-model.ts";

function conformanceTools(setup: RunnerConformanceSetup): ToolSet {
  const tools: ToolSet = {};
  for (const neutral of setup.tools) {
    const approval = setup.inlineWriteOption === true && neutral.name === "refund_order" ? false : neutral.frameworkApproval;
    tools[neutral.name] = tool({
      description: neutral.description,
      inputSchema: jsonSchema<Record<string, unknown>>(neutral.parameters as JSONSchema7),
      ...(approval === undefined ? {} : { needsApproval: typeof approval === "boolean" ? approval : async (input: Record<string, unknown>) => approval(input) }),
      execute: async (input) => {
        const scope = currentToolExecution();
        if (scope === undefined) throw new Error(`${neutral.name} ran outside a durable tool Step`);
        return neutral.execute(input, { idempotencyKey: scope.idempotencyKey });
      },
    });
  }
  return tools;
}

export const vercelAiConformanceSubject: RunnerConformanceSubject = {
  name: "AI SDK adapter",
  createFlow: (setup) => {
    const agent = new ToolLoopAgent({ model: conformanceLanguageModel(setup.model), instructions: setup.instructions, tools: conformanceTools(setup) });
    const toolPolicies = Object.fromEntries(setup.tools.map((neutral) => [neutral.name, { effect: neutral.effect }]));
    return createVercelAiAgentSessionFlow(agent, setup.flowType, { toolPolicies, builtInTools: [...setup.builtInTools] });
  },
  workerEntryModulePath: fileURLToPath(new URL("./vercel-ai-conformance-worker-main.ts", import.meta.url)),
  inlineWriteOption: "needsApproval: false",
};
