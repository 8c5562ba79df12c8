/**
 * Tool calls as stored messages record them, for when a turn's tool call
 * records are gone: a stored tool result carries its call ID, name and text;
 * the arguments are read from the assistant message's framework item in the
 * two forms this package's runners store.
 */

/** A tool call a stored assistant message made. */
export interface StoredToolCall {
  toolCallId: string;
  toolName: string;
  /** The model's arguments, parsed when they are JSON. */
  input: unknown;
}

/** Parses a call's arguments text; text that is not JSON is kept as it is. */
export function parseToolCallArguments(argumentsText: string): unknown {
  try {
    return JSON.parse(argumentsText) as unknown;
  } catch {
    return argumentsText;
  }
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * The tool calls of a stored assistant message's framework item: a Stepwise
 * `model_output` item (`tool_calls: [{ id, name, arguments }]`), or an AI SDK
 * assistant model message (`content: [{ type: "tool-call", toolCallId, toolName, input }]`),
 * or the Claude Agent SDK adapter's transcript entries (`tool_use` blocks;
 * the harness's `mcp__perdure__` prefix is dropped, as the session names
 * the tool). Other framework items yield none.
 */
export function readStoredToolCalls(frameworkItem: unknown): StoredToolCall[] {
  const item = asRecord(frameworkItem);
  if (item === undefined) return [];
  if (item.type === "model_output" && Array.isArray(item.tool_calls)) {
    return item.tool_calls.flatMap((value) => {
      const call = asRecord(value);
      return call !== undefined && typeof call.id === "string" && typeof call.name === "string"
        ? [{ toolCallId: call.id, toolName: call.name, input: typeof call.arguments === "string" ? parseToolCallArguments(call.arguments) : (call.arguments ?? null) }]
        : [];
    });
  }
  if (item.role === "assistant" && Array.isArray(item.content)) {
    return item.content.flatMap((value) => {
      const part = asRecord(value);
      return part?.type === "tool-call" && typeof part.toolCallId === "string" && typeof part.toolName === "string"
        ? [{ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input ?? null }]
        : [];
    });
  }
  if (item.kind === "claude_code_transcript" && Array.isArray(item.entries)) return claudeTranscriptToolCalls(item.entries);
  return [];
}

/** The `tool_use` blocks of a Claude Code transcript's main-chain assistant entries. */
function claudeTranscriptToolCalls(entries: unknown[]): StoredToolCall[] {
  return entries.flatMap((value) => {
    const entry = asRecord(value);
    const content = asRecord(entry?.message)?.content;
    if (entry?.type !== "assistant" || entry.isSidechain === true || !Array.isArray(content)) return [];
    return content.flatMap((blockValue) => {
      const block = asRecord(blockValue);
      return block?.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string"
        ? [{ toolCallId: block.id, toolName: block.name.replace(/^mcp__perdure__/, ""), input: block.input ?? null }]
        : [];
    });
  });
}
