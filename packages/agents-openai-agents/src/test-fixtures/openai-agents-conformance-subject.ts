/**
 * The OpenAI Agents SDK adapter as a subject of the runner conformance
 * tests: an `Agent` on the scripted SDK `Model`, the neutral tools as SDK
 * function tools that read their idempotency key from
 * `currentToolExecution()`, their framework approval as `needsApproval`,
 * and `errorFunction: null` so a thrown error reaches the session (the
 * adapter's own tests cover the default `errorFunction`).
 * The inline write option is the refund tool's `needsApproval: false`.
 */
import { fileURLToPath } from "node:url";
import { Agent, tool } from "@openai/agents";
import type { RunnerConformanceSubject } from "@perdure/agents/testing";
import { createOpenAiAgentsSessionFlow } from "../create-openai-agents-session-flow.ts";
import { currentToolExecution } from "@perdure/agents";
import { ConformanceSdkModel } from "./conformance-model.ts";

export const openAiAgentsConformanceSubject: RunnerConformanceSubject = {
  name: "OpenAI Agents SDK adapter",
  createFlow: (setup) => {
    const tools = setup.tools.map((neutral) => {
      const approval = setup.inlineWriteOption === true && neutral.name === "refund_order" ? false : neutral.frameworkApproval;
      return tool({
        name: neutral.name,
        description: neutral.description,
        parameters: neutral.parameters as never,
        strict: false,
        errorFunction: null,
        ...(approval === undefined ? {} : { needsApproval: typeof approval === "boolean" ? approval : async (_context: unknown, input: unknown) => approval(input as Record<string, unknown>) }),
        execute: async (input) => {
          const execution = currentToolExecution();
          if (execution === undefined) throw new Error(`${neutral.name} ran outside a durable tool Step`);
          return neutral.execute(input as Record<string, unknown>, { idempotencyKey: execution.idempotencyKey });
        },
      });
    });
    const agent = new Agent({ name: "conformance", instructions: setup.instructions, model: new ConformanceSdkModel(setup.model), tools });
    const toolPolicies = Object.fromEntries(setup.tools.map((neutral) => [neutral.name, { effect: neutral.effect }]));
    return createOpenAiAgentsSessionFlow(agent, setup.flowType, { toolPolicies, builtInTools: [...setup.builtInTools] });
  },
  workerEntryModulePath: fileURLToPath(new URL("./openai-agents-conformance-worker-main.ts", import.meta.url)),
  inlineWriteOption: "needsApproval: false",
};
