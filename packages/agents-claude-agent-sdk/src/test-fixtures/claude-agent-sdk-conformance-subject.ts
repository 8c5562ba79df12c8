/**
 * The Claude Agent SDK adapter as a subject of the runner conformance tests:
 * the real Claude Code harness against a loopback fake of the Messages API
 * answering from the neutral script, the neutral tools as SDK MCP tools
 * (schemas converted to zod raw shapes) that read their idempotency key
 * from `currentToolExecution()`, their framework approval as the
 * agent's `needsApproval`. The conformance tests run every call in a tool
 * Step, so reads are not run inside the harness here. The inline write
 * option is `allowedTools` naming the refund tool.
 */
import { fileURLToPath } from "node:url";
import { tool } from "@anthropic-ai/claude-agent-sdk";
import type { RunnerConformanceSubject } from "@perdure/agents/testing";
import { createClaudeAgentSdkSessionFlow } from "../create-claude-agent-sdk-session-flow.ts";
import { currentToolExecution } from "@perdure/agents";
import { zodRawShapeFromJsonSchema } from "../zod-raw-shape.ts";
import { conformanceScript, scriptedHarnessOptions } from "./scripted-harness-options.ts";

export const claudeAgentSdkConformanceSubject: RunnerConformanceSubject = {
  name: "Claude Agent SDK adapter",
  createFlow: (setup) => {
    const tools = setup.tools.map((neutral) => tool(neutral.name, neutral.description, zodRawShapeFromJsonSchema(neutral.parameters), async (args) => {
      const execution = currentToolExecution();
      if (execution === undefined) throw new Error(`${neutral.name} ran outside a durable tool Step`);
      return { content: [{ type: "text" as const, text: await neutral.execute(args, { idempotencyKey: execution.idempotencyKey }) }] };
    }));
    const toolPolicies = Object.fromEntries(setup.tools.map((neutral) => [neutral.name, { effect: neutral.effect }]));
    const needsApproval = Object.fromEntries(setup.tools.flatMap((neutral) => (neutral.frameworkApproval === undefined ? [] : [[neutral.name, neutral.frameworkApproval]])));
    // A flow that refuses its options must not leave a fake server running, so the inline case starts none.
    const queryOptions = setup.inlineWriteOption === true ? { allowedTools: ["mcp__perdure__refund_order"] } : scriptedHarnessOptions(conformanceScript(setup.model)).queryOptions;
    return createClaudeAgentSdkSessionFlow({ systemPrompt: setup.instructions, tools, needsApproval }, setup.flowType, {
      queryOptions,
      readToolsRunInHarness: false,
      toolPolicies,
      builtInTools: [...setup.builtInTools],
    });
  },
  workerEntryModulePath: fileURLToPath(new URL("./claude-agent-sdk-conformance-worker-main.ts", import.meta.url)),
  inlineWriteOption: "allowedTools",
};
