/**
 * The Claude Agent SDK adapter's model calls as the session records them:
 * one per run of the harness (`RunModel`). The request is what the agent's
 * code decides for the run (system prompt, model, the tools as the model
 * sees them, the prompt); the response is the transcript entries the
 * harness wrote and the call it stopped at. A replay compares the request
 * and answers with the entries, without starting the harness.
 */
import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import type { BuiltInToolDefinition } from "@perdure/agents";
import { z } from "zod";
import { harnessToolName, type ClaudeSdkTool } from "./claude-tools.ts";

/** What one run of the harness is given. */
export interface ClaudeRunRequest {
  systemPrompt: string | undefined;
  model: string | undefined;
  tools: readonly ClaudeSdkTool[];
  builtIns: readonly BuiltInToolDefinition[];
  /** The turn's user text, or the results of the deferred calls the run resumes with. */
  prompt: string | { toolResults: { toolUseId: string; content: string }[] };
}

/** A run's response as recorded. */
export interface RecordedClaudeResponse {
  entries: SessionStoreEntry[];
  first_deferred_tool_use_id: string | null;
}

/** An SDK MCP tool's arguments as JSON Schema, or null when zod cannot convert its shape. */
function inputJsonSchema(tool: ClaudeSdkTool): unknown {
  try {
    const schema = tool.inputSchema as unknown;
    return z.toJSONSchema(schema instanceof z.ZodType ? schema : z.object(schema as z.ZodRawShape));
  } catch {
    return null;
  }
}

/** A run's request as the session records it, in JSON. */
export function recordedClaudeRequest(run: ClaudeRunRequest): Record<string, unknown> {
  const tools = [
    ...run.tools.map((tool) => ({ name: harnessToolName(tool.name), description: tool.description, input_schema: inputJsonSchema(tool) })),
    ...run.builtIns.map((definition) => ({ name: harnessToolName(definition.name), description: definition.description, input_schema: definition.parameters })),
  ];
  const prompt = typeof run.prompt === "string" ? run.prompt : { tool_results: run.prompt.toolResults.map((result) => ({ tool_use_id: result.toolUseId, content: result.content })) };
  return JSON.parse(JSON.stringify({ system_prompt: run.systemPrompt ?? null, model: run.model ?? null, tools, prompt })) as Record<string, unknown>;
}

/** A run's response as the session records it, in JSON. */
export function recordedClaudeResponse(entries: readonly SessionStoreEntry[], firstDeferredToolUseId: string | null): RecordedClaudeResponse {
  return JSON.parse(JSON.stringify({ entries, first_deferred_tool_use_id: firstDeferredToolUseId })) as RecordedClaudeResponse;
}
