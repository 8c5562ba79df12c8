/**
 * The three `read` tools `resourceAndPromptToolsEnabled` adds: list a
 * server's resources, resource templates and prompts; read a resource; get a
 * prompt. Each opens a new connection to the server it names.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolExecutionError } from "../contract/tool-execution-error.ts";
import type { JsonSchema } from "../stepwise/model-client.ts";
import { everyPage, isMcpErrorAnswer, McpConnectionFailedError, mcpErrorAnswerText, withMcpConnection } from "./mcp-connection.ts";
import { mcpJsonText } from "./mcp-result-text.ts";
import type { ResolvedMcpServerConfig } from "./mcp-server-config.ts";
import type { ResolvedMcpToolSourceOptions } from "./mcp-tool-source-options.ts";

export const mcpListResourcesAndPromptsToolName = "mcp_list_resources_and_prompts";
export const mcpReadResourceToolName = "mcp_read_resource";
export const mcpGetPromptToolName = "mcp_get_prompt";

export type McpResourceAndPromptToolName = typeof mcpListResourcesAndPromptsToolName | typeof mcpReadResourceToolName | typeof mcpGetPromptToolName;

export const mcpResourceAndPromptToolNames: readonly McpResourceAndPromptToolName[] = [mcpListResourcesAndPromptsToolName, mcpReadResourceToolName, mcpGetPromptToolName];

export function isMcpResourceAndPromptToolName(name: string): name is McpResourceAndPromptToolName {
  return (mcpResourceAndPromptToolNames as readonly string[]).includes(name);
}

/** The definitions, with `server` an `enum` of the configured names. */
export function mcpResourceAndPromptToolDefinitions(serverNames: readonly string[]): { name: McpResourceAndPromptToolName; description: string; parameters: JsonSchema }[] {
  const server = { type: "string", enum: [...serverNames], description: "Name of the MCP server." };
  return [
    {
      name: mcpListResourcesAndPromptsToolName,
      description: "List the resources, resource templates, and prompts that an MCP server offers.",
      parameters: { type: "object", properties: { server }, required: ["server"], additionalProperties: false },
    },
    {
      name: mcpReadResourceToolName,
      description: "Read one resource of an MCP server by its URI.",
      parameters: { type: "object", properties: { server, uri: { type: "string", description: "URI of the resource." } }, required: ["server", "uri"], additionalProperties: false },
    },
    {
      name: mcpGetPromptToolName,
      description: "Get a prompt of an MCP server, filled in with its arguments.",
      parameters: {
        type: "object",
        properties: {
          server,
          name: { type: "string", description: "Name of the prompt." },
          arguments: { type: "object", additionalProperties: { type: "string" }, description: "The prompt's arguments, by name." },
        },
        required: ["server", "name"],
        additionalProperties: false,
      },
    },
  ];
}

async function listResourcesAndPrompts(client: Client, timeout: number): Promise<string> {
  const capabilities = client.getServerCapabilities() ?? {};
  const page = (cursor: string | undefined) => (cursor === undefined ? {} : { cursor });
  const resources = capabilities.resources === undefined ? [] : await everyPage(async (cursor) => {
    const result = await client.listResources(page(cursor), { timeout });
    return { items: result.resources, nextCursor: result.nextCursor };
  });
  const resourceTemplates = capabilities.resources === undefined ? [] : await everyPage(async (cursor) => {
    const result = await client.listResourceTemplates(page(cursor), { timeout });
    return { items: result.resourceTemplates, nextCursor: result.nextCursor };
  });
  const prompts = capabilities.prompts === undefined ? [] : await everyPage(async (cursor) => {
    const result = await client.listPrompts(page(cursor), { timeout });
    return { items: result.prompts, nextCursor: result.nextCursor };
  });
  return mcpJsonText({ prompts, resource_templates: resourceTemplates, resources });
}

function readString(argumentsValue: Record<string, unknown>, field: string, toolName: string): string {
  const value = argumentsValue[field];
  if (typeof value !== "string") throw new ToolExecutionError(`${toolName} needs ${field} as a string, got ${JSON.stringify(value) ?? "nothing"}`);
  return value;
}

/** Runs one of the three tools and returns its output text. */
export async function runMcpResourceAndPromptTool(
  toolName: McpResourceAndPromptToolName,
  argumentsValue: Record<string, unknown>,
  servers: ReadonlyMap<string, ResolvedMcpServerConfig>,
  options: ResolvedMcpToolSourceOptions,
  signal: AbortSignal | undefined,
): Promise<string> {
  const serverName = readString(argumentsValue, "server", toolName);
  const server = servers.get(serverName);
  if (server === undefined) throw new ToolExecutionError(`MCP server ${serverName} is not configured; use one of ${[...servers.keys()].join(", ")}`);
  const timeout = options.requestTimeoutMs;
  try {
    return await withMcpConnection(server, { ...options, signal }, async ({ client }) => {
      if (toolName === mcpListResourcesAndPromptsToolName) return listResourcesAndPrompts(client, timeout);
      if (toolName === mcpReadResourceToolName) {
        const result = await client.readResource({ uri: readString(argumentsValue, "uri", toolName) }, { timeout });
        return mcpJsonText({ contents: result.contents });
      }
      const promptArguments = argumentsValue.arguments ?? {};
      if (typeof promptArguments !== "object" || promptArguments === null || Array.isArray(promptArguments) || !Object.values(promptArguments).every((value) => typeof value === "string")) {
        throw new ToolExecutionError(`${toolName} needs arguments as an object of strings, got ${JSON.stringify(promptArguments)}`);
      }
      const result = await client.getPrompt({ name: readString(argumentsValue, "name", toolName), arguments: promptArguments as Record<string, string> }, { timeout });
      return mcpJsonText({ description: result.description ?? null, messages: result.messages });
    });
  } catch (error) {
    if (ToolExecutionError.isInstance(error)) throw error;
    if (error instanceof McpConnectionFailedError) throw new ToolExecutionError(error.message, { cause: error });
    if (isMcpErrorAnswer(error)) throw new ToolExecutionError(mcpErrorAnswerText(error.message), { cause: error });
    throw error;
  }
}
