/**
 * Stepwise as a subject of the runner conformance tests: the neutral script
 * behind a `ScriptedModelClient`, the neutral tools as function tools.
 */
import { fileURLToPath } from "node:url";
import type { RunnerConformanceSubject } from "../../testing/runner-conformance/run-runner-conformance.ts";
import type { RunnerConformanceSetup } from "../../testing/runner-conformance/conformance-script.ts";
import { createStepwiseAgentSessionFlow } from "../create-stepwise-agent-session-flow.ts";
import { functionTool } from "../function-tool.ts";
import { ScriptedModelClient } from "../scripted-model-client.ts";

function createStepwiseConformanceFlow(setup: RunnerConformanceSetup) {
  const model = new ScriptedModelClient(async (request) => {
    const reply = await setup.model.reply({
      lastUserText: ScriptedModelClient.userTexts(request).at(-1) ?? "",
      turnToolResults: ScriptedModelClient.toolResults(request).map(({ toolName, output }) => ({ toolName, output })),
      signal: request.signal,
    });
    return reply.kind === "text" ? { text: reply.text } : { toolCalls: [{ name: reply.toolName, arguments: reply.arguments }] };
  });
  const tools = setup.tools.map((tool) => functionTool({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    effect: tool.effect,
    execute: (argumentsValue, context) => tool.execute(argumentsValue, { idempotencyKey: context.idempotencyKey }),
  }));
  return createStepwiseAgentSessionFlow({ name: "conformance", instructions: setup.instructions, model, tools, builtInTools: [...setup.builtInTools] }, setup.flowType);
}

export const stepwiseConformanceSubject: RunnerConformanceSubject = {
  name: "Stepwise",
  createFlow: createStepwiseConformanceFlow,
  workerEntryModulePath: fileURLToPath(new URL("./stepwise-conformance-worker-main.ts", import.meta.url)),
};
