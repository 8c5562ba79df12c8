/**
 * The shop's notes, from the example notes MCP server, as each framework's
 * own schema-only tools: the contract's recipe for MCP tools with an adapter.
 * Each wrapped tool calls `notes.callTool` with the durable call's key, and
 * the source's policies (from the tools' annotations) go to the session.
 * A server that cannot be listed gives no tools and a warning; the agents
 * still run.
 */
import { randomUUID } from "node:crypto";
import { tool as claudeTool } from "@anthropic-ai/claude-agent-sdk";
import type { ToolsInput } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { tool as openAiTool } from "@openai/agents";
import { jsonSchema, tool as aiSdkTool, type JSONSchema7, type ToolSet } from "ai";
import { McpToolSource, type McpTool } from "@perdure/agents/mcp";
import { currentToolExecution, zodRawShapeFromJsonSchema, type ClaudeSdkTool } from "@perdure/agents-claude-agent-sdk";
import { idempotencyKeyRequestContextKey } from "@perdure/agents-mastra";
import { notesMcpServerConfig } from "@perdure/example-mcp-notes-server";

/** The notes server; its file is PERDURE_NOTES_FILE, else .perdure/notes.json. */
export const notes = new McpToolSource([notesMcpServerConfig()]);

/** Listed once, when the entry module loads. */
const listed: McpTool[] = await notes.listTools();

function idempotencyKeyOf(key: string | undefined, toolName: string): string {
  if (key === undefined) throw new Error(`${toolName} ran outside a durable tool Step`);
  return key;
}

/** The notes tools for the AI SDK agent. */
export function aiSdkNotesTools(): ToolSet {
  return Object.fromEntries(listed.map((mcpTool) => [mcpTool.name, aiSdkTool({
    description: mcpTool.description,
    inputSchema: jsonSchema<Record<string, unknown>>(mcpTool.inputSchema as JSONSchema7),
    execute: (input) => notes.callTool(mcpTool.name, input, { idempotencyKey: idempotencyKeyOf(currentToolExecution()?.idempotencyKey, mcpTool.name) }),
  })]));
}

/** The notes tools for the OpenAI Agents SDK agent. */
export function openAiNotesTools(): ReturnType<typeof openAiTool>[] {
  return listed.map((mcpTool) => openAiTool({
    name: mcpTool.name,
    description: mcpTool.description,
    parameters: mcpTool.inputSchema as never,
    strict: false,
    errorFunction: null,
    execute: (input) => notes.callTool(mcpTool.name, input as Record<string, unknown>, { idempotencyKey: idempotencyKeyOf(currentToolExecution()?.idempotencyKey, mcpTool.name) }),
  }));
}

/** The notes tools for the Mastra agent. */
export function mastraNotesTools(): ToolsInput {
  return Object.fromEntries(listed.map((mcpTool) => [mcpTool.name, createTool<string, never>({
    id: mcpTool.name,
    description: mcpTool.description,
    inputSchema: mcpTool.inputSchema as never,
    execute: async (input, { requestContext }) => {
      const key: unknown = requestContext?.get(idempotencyKeyRequestContextKey);
      return notes.callTool(mcpTool.name, input as Record<string, unknown>, { idempotencyKey: idempotencyKeyOf(typeof key === "string" ? key : undefined, mcpTool.name) });
    },
  })]));
}

/**
 * The notes tools for the Claude Agent SDK agent: SDK MCP tools whose JSON
 * Schemas become zod raw shapes. A read runs inside the harness, where no
 * durable call exists, so it sends a key of its own; a write runs in its
 * tool Step and sends the call's key.
 */
export function claudeNotesTools(): ClaudeSdkTool[] {
  return listed.map((mcpTool) => claudeTool(mcpTool.name, mcpTool.description, zodRawShapeFromJsonSchema(mcpTool.inputSchema), async (input) => {
    const key = currentToolExecution()?.idempotencyKey ?? `read-in-harness/${randomUUID()}`;
    return { content: [{ type: "text" as const, text: await notes.callTool(mcpTool.name, input, { idempotencyKey: key }) }] };
  }, mcpTool.annotations === null ? {} : { annotations: mcpTool.annotations }));
}
