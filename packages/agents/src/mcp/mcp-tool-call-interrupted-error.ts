const mcpToolCallInterruptedErrorMarker = Symbol.for("perdure.agents.mcp-tool-call-interrupted-error");

/**
 * A `tools/call` that was sent but got no usable answer: the connection
 * broke, the server exited, the request timed out, or the answer was an
 * internal error (`-32603`), an HTTP error status, or an unreadable body. The
 * server may have run the call, so it is a Step failure: `CallTool` sends a
 * new request for a `read` or `idempotent_write` tool, with the same
 * idempotency key, and any other effect records `outcome_unknown`.
 */
export class McpToolCallInterruptedError extends Error {
  readonly code = "mcp_tool_call_interrupted";
  readonly [mcpToolCallInterruptedErrorMarker] = true;
  readonly serverName: string;
  readonly toolName: string;

  constructor(serverName: string, toolName: string, detail: string, options?: { cause?: unknown }) {
    super(`MCP tool call ${toolName} on server ${serverName} was interrupted after it was sent: ${detail}`, options);
    this.name = "McpToolCallInterruptedError";
    this.serverName = serverName;
    this.toolName = toolName;
  }

  /** True for an `McpToolCallInterruptedError` from any copy of the package. */
  static isInstance(value: unknown): value is McpToolCallInterruptedError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[mcpToolCallInterruptedErrorMarker] === true;
  }
}
