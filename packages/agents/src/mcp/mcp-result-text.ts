/**
 * MCP values as the text a model sees: JSON with sorted keys and Python's
 * `json.dumps` separators, and a tool result as its text blocks joined with
 * newlines, with any other content block as JSON.
 */
import { pythonJsonDumps } from "../contract/python-json.ts";

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortedKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

/** `json.dumps(value, sort_keys=True)`. */
export function mcpJsonText(value: unknown): string {
  return pythonJsonDumps(sortedKeys(value));
}

/** The text of a `tools/call` result's content. */
export function mcpToolResultText(result: { content?: unknown; structuredContent?: unknown }): string {
  const content = Array.isArray(result.content) ? result.content : [];
  if (content.length === 0 && result.structuredContent !== undefined) return mcpJsonText(result.structuredContent);
  return content.map((block: unknown) => {
    const typed = block as { type?: unknown; text?: unknown };
    return typed.type === "text" && typeof typed.text === "string" ? typed.text : mcpJsonText(block);
  }).join("\n");
}
