/**
 * Stepwise as a subject of the runner conformance tests: the neutral script
 * behind a `ScriptedModelClient`, the neutral tools as function tools with
 * their framework approval as `requiresApproval`, and their effects as the
 * agent's `toolPolicies`. The inline write option is the refund tool's own
 * `requiresApproval: false`.
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
  const tools = setup.tools.map((tool) => {
    const approval = setup.inlineWriteOption === true && tool.name === "refund_order" ? false : tool.frameworkApproval;
    return functionTool({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      ...(approval === undefined ? {} : { requiresApproval: approval }),
      execute: (argumentsValue, context) => tool.execute(argumentsValue, { idempotencyKey: context.idempotencyKey }),
    });
  });
  const toolPolicies = Object.fromEntries(setup.tools.map((tool) => [tool.name, { effect: tool.effect }]));
  return createStepwiseAgentSessionFlow({ name: "conformance", instructions: setup.instructions, model, tools, toolPolicies, builtInTools: [...setup.builtInTools] }, setup.flowType);
}

export const stepwiseConformanceSubject: RunnerConformanceSubject = {
  name: "Stepwise",
  createFlow: createStepwiseConformanceFlow,
  workerEntryModulePath: fileURLToPath(new URL("./stepwise-conformance-worker-main.ts", import.meta.url)),
  inlineWriteOption: "requiresApproval: false",
};
