/** The contract's MCP effects table: effects from a tool's annotations. */
import type { ToolEffect } from "../contract/values/tool-effect.ts";

/** The MCP tool annotations the effect depends on. */
export interface McpToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  title?: string;
}

/** `read` or `idempotent_write` when the hints say so, otherwise undefined. */
export function annotatedMcpToolEffect(annotations: McpToolAnnotations | undefined): ToolEffect | undefined {
  if (annotations?.readOnlyHint === true) return "read";
  if (annotations?.idempotentHint === true) return "idempotent_write";
  return undefined;
}

/**
 * Classifies an MCP tool: `readOnlyHint: true` is `read`; otherwise
 * `idempotentHint: true` is `idempotent_write`, whatever `destructiveHint`
 * says; anything else is `defaultToolEffect`.
 *
 * @example
 * toolEffectFromMcpToolAnnotations({ readOnlyHint: true }); // "read"
 * toolEffectFromMcpToolAnnotations({ destructiveHint: true }); // "unclassified"
 */
export function toolEffectFromMcpToolAnnotations(annotations: McpToolAnnotations | undefined | null, defaultToolEffect: ToolEffect = "unclassified"): ToolEffect {
  return annotatedMcpToolEffect(annotations ?? undefined) ?? defaultToolEffect;
}
