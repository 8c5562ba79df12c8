const claudeQueryOptionRefusedErrorMarker = Symbol.for("perdure.agents-claude-agent-sdk.claude-query-option-refused-error");

/**
 * A Claude Agent SDK option the adapter refuses, because it would let a
 * call that is not a plain read run inside the harness, without its tool
 * Step or its approval. The message names the option and says what to do.
 *
 * @example
 * try {
 *   createClaudeAgentSdkSessionFlow(agent, "SupportAgent", { queryOptions: { permissionMode: "bypassPermissions" } });
 * } catch (error) {
 *   if (ClaudeQueryOptionRefusedError.isInstance(error)) console.error(error.option); // "permissionMode"
 * }
 */
export class ClaudeQueryOptionRefusedError extends Error {
  readonly code = "claude_query_option_refused";
  /** The refused option, as `queryOptions` spells it (`allowedTools`, `hooks.PermissionRequest`, ...). */
  readonly option: string;
  readonly [claudeQueryOptionRefusedErrorMarker] = true;

  constructor(option: string, reason: string) {
    super(`queryOptions.${option} is refused: ${reason}`);
    this.name = "ClaudeQueryOptionRefusedError";
    this.option = option;
  }

  /** True for a `ClaudeQueryOptionRefusedError` from any copy of the package. */
  static isInstance(value: unknown): value is ClaudeQueryOptionRefusedError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[claudeQueryOptionRefusedErrorMarker] === true;
  }
}
