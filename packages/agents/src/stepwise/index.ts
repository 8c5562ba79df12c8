/**
 * `@perdure/agents/stepwise`: the built-in agent loop. Declare the agent, its
 * function tools and its model client; the session Flow does the rest.
 *
 * @example
 * import { createStepwiseAgentSessionFlow, functionTool, ScriptedModelClient } from "@perdure/agents/stepwise";
 * const flow = createStepwiseAgentSessionFlow(
 *   { name: "echo", instructions: "Repeat the user.", model: new ScriptedModelClient((request) => ({ text: ScriptedModelClient.userTexts(request).at(-1) ?? "" })) },
 *   "EchoAgent",
 * );
 */
export { createStepwiseAgentSessionFlow } from "./create-stepwise-agent-session-flow.ts";
export { StepwiseAgentRunner, buildModelInput, modelCallLimitToolResult } from "./stepwise-agent-runner.ts";
export type { AgentDefinition, InstructionContext } from "./agent-definition.ts";
export {
  buildContextSummaryOmissionNote,
  contextSummaryInstructions,
  contextSummaryNoteHeader,
  contextSummaryPrompt,
} from "./compaction/context-summary-texts.ts";
export { functionTool } from "./function-tool.ts";
export { agentTool, childSessionId } from "./agent-tool.ts";
export { AgentToolSet, executeFunctionToolCall } from "./function-tool-call.ts";
export type { AgentToolOptions } from "./agent-tool.ts";
export type { FunctionTool, FunctionToolSpec, ToolApprovalSetting, ToolCallContext } from "./function-tool.ts";
export type { ListedTool, ToolSource, ToolSourceCallRequest, ToolSourceExecution } from "./tool-source.ts";
export { ScriptedModelClient } from "./scripted-model-client.ts";
export type { ScriptedModelClientOptions, ScriptedModelReply } from "./scripted-model-client.ts";
export type {
  JsonSchema,
  ModelClient,
  ModelOutputItem,
  ModelOutputToolCall,
  ModelRequest,
  ModelResponse,
  ModelSettings,
  ModelToolCall,
  ModelToolDefinition,
  StepwiseInputItem,
  ToolResultItem,
  UserTextItem,
} from "./model-client.ts";
