/**
 * Agent tool names of MCP tools: `<server>__<tool>`, with every character
 * other than a letter, digit, `_` or `-` replaced by `_`, and a name over 64
 * characters cut and ended with a hash of the whole name.
 */
import { createHash } from "node:crypto";

/** Longest agent tool name an MCP tool gets. */
export const mcpToolNameMaxLength = 64;

const hashLength = 8;

/** The agent tool name of `toolName` on `serverName`. */
export function mcpAgentToolName(serverName: string, toolName: string): string {
  const joined = `${serverName}__${toolName}`.replace(/[^A-Za-z0-9_-]/g, "_");
  if (joined.length <= mcpToolNameMaxLength) return joined;
  // The hash covers the unreplaced name, so two long names that differ only in replaced characters stay apart.
  const hash = createHash("sha256").update(`${serverName}__${toolName}`).digest("hex").slice(0, hashLength);
  return `${joined.slice(0, mcpToolNameMaxLength - hashLength - 1)}_${hash}`;
}
