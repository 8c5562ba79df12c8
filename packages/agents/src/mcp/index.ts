/**
 * `@perdure/agents/mcp`: the tools of MCP servers as agent tools, each call
 * in its own tool Step with an effect from the tool's annotations. Needs the
 * optional peer dependency `@modelcontextprotocol/sdk` (`^1.32.2`); importing
 * this entry without it fails with
 * `Cannot find package '@modelcontextprotocol/sdk'`.
 *
 * @example
 * import { McpToolSource } from "@perdure/agents/mcp";
 * import { createStepwiseAgentSessionFlow } from "@perdure/agents/stepwise";
 *
 * const files = new McpToolSource([{ transport: "stdio", name: "files", command: "mcp-server-files", args: ["/srv/reports"] }]);
 * export const reportsAgentFlow = createStepwiseAgentSessionFlow(
 *   { name: "reports", instructions: "You manage reports.", model, toolSources: [files] },
 *   "ReportsAgent",
 * );
 */
export { McpToolSource } from "./mcp-tool-source.ts";
export type { McpCallToolOptions, McpDeferredToolHandler, McpModelToolCall, McpTool } from "./mcp-tool-source.ts";
export type { McpToolSourceOptions } from "./mcp-tool-source-options.ts";
export type { McpServerConfig, McpStdioServerConfig, McpStreamableHttpServerConfig } from "./mcp-server-config.ts";
export { toolEffectFromMcpToolAnnotations } from "./mcp-tool-effects.ts";
export type { McpToolAnnotations } from "./mcp-tool-effects.ts";
export { mcpAgentToolName, mcpToolNameMaxLength } from "./mcp-tool-names.ts";
export { mcpIdempotencyKeyMetaKey, mcpToolProgressEventType } from "./mcp-tool-call.ts";
export { mcpTaskStatusEventType } from "./mcp-task-polling.ts";
export { McpToolCallInterruptedError } from "./mcp-tool-call-interrupted-error.ts";
export { mcpGetPromptToolName, mcpListResourcesAndPromptsToolName, mcpReadResourceToolName } from "./mcp-resource-and-prompt-tools.ts";
