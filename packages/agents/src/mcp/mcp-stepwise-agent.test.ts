import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "@perdure/engine";
import { createStepwiseAgentSessionFlow } from "../stepwise/create-stepwise-agent-session-flow.ts";
import { functionTool } from "../stepwise/function-tool.ts";
import { ScriptedModelClient } from "../stepwise/scripted-model-client.ts";
import { McpToolSource } from "./mcp-tool-source.ts";

const server = { transport: "stdio" as const, name: "files", command: "mcp-server-files" };
const model = new ScriptedModelClient(() => ({ text: "ok" }));

describe("McpToolSource in a Stepwise agent", () => {
  it("two sources keep the default sourceName only once", () => {
    assert.throws(() => createStepwiseAgentSessionFlow({ name: "two", instructions: "x", model, toolSources: [new McpToolSource([server]), new McpToolSource([server])] }, "TwoMcp"),
      (error: unknown) => error instanceof InvalidInputError && error.message === "agent two has two tool sources named mcp; give each a unique sourceName");
    assert.doesNotThrow(() => createStepwiseAgentSessionFlow({ name: "two", instructions: "x", model, toolSources: [new McpToolSource([server]), new McpToolSource([server], { sourceName: "more" })] }, "TwoNamedMcp"));
  });

  it("refuses the resource and prompt tools on two sources, and a function tool of their name, when the agent is built", () => {
    const withTools = (sourceName: string) => new McpToolSource([server], { sourceName, resourceAndPromptToolsEnabled: true });
    assert.throws(() => createStepwiseAgentSessionFlow({ name: "r", instructions: "x", model, toolSources: [withTools("a"), withTools("b")] }, "TwoResourceTools"),
      (error: unknown) => error instanceof TypeError && error.message === "two tool sources list a tool named mcp_list_resources_and_prompts");
    const clash = functionTool({ name: "mcp_read_resource", description: "", parameters: { type: "object" }, execute: () => "" });
    assert.throws(() => createStepwiseAgentSessionFlow({ name: "r", instructions: "x", model, tools: [clash], toolSources: [withTools("a")] }, "ResourceToolClash"),
      (error: unknown) => error instanceof TypeError && error.message === "tool mcp_read_resource of a tool source uses the name of a function tool");
  });
});
