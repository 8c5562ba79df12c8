import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { mcpErrorAnswerText } from "./mcp-connection.ts";

describe("the text of an MCP error answer", () => {
  it("keeps the SDK's prefix once when the server's own McpError text had it already", () => {
    const serverSide = new McpError(ErrorCode.InvalidParams, "Prompt nope not found");
    const clientSide = new McpError(ErrorCode.InvalidParams, serverSide.message);
    assert.equal(clientSide.message, "MCP error -32602: MCP error -32602: Prompt nope not found");
    assert.equal(mcpErrorAnswerText(clientSide.message), "MCP error -32602: Prompt nope not found");
  });

  it("leaves a single prefix, a message without one and a prefix inside the text as they are", () => {
    assert.equal(mcpErrorAnswerText("MCP error -32602: Prompt nope not found"), "MCP error -32602: Prompt nope not found");
    assert.equal(mcpErrorAnswerText("the note is locked"), "the note is locked");
    assert.equal(mcpErrorAnswerText("failed: MCP error -32602: MCP error -32602: x"), "failed: MCP error -32602: MCP error -32602: x");
    assert.equal(mcpErrorAnswerText("MCP error -32000: MCP error -32000: MCP error -32000: busy"), "MCP error -32000: busy");
  });
});
