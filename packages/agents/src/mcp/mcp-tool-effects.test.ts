import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "@perdure/engine";
import { resolveMcpServerConfigs } from "./mcp-server-config.ts";
import { toolEffectFromMcpToolAnnotations } from "./mcp-tool-effects.ts";
import { resolveMcpToolSourceOptions } from "./mcp-tool-source-options.ts";
import { McpToolSource } from "./mcp-tool-source.ts";

describe("toolEffectFromMcpToolAnnotations", () => {
  it("follows the contract's effects table", () => {
    assert.equal(toolEffectFromMcpToolAnnotations({ readOnlyHint: true }), "read");
    assert.equal(toolEffectFromMcpToolAnnotations({ readOnlyHint: true, idempotentHint: true, destructiveHint: true }), "read");
    assert.equal(toolEffectFromMcpToolAnnotations({ idempotentHint: true }), "idempotent_write");
    assert.equal(toolEffectFromMcpToolAnnotations({ idempotentHint: true, destructiveHint: true }), "idempotent_write");
    assert.equal(toolEffectFromMcpToolAnnotations({ destructiveHint: false }), "unclassified");
    assert.equal(toolEffectFromMcpToolAnnotations({ readOnlyHint: false, idempotentHint: false }), "unclassified");
    assert.equal(toolEffectFromMcpToolAnnotations(undefined), "unclassified");
    assert.equal(toolEffectFromMcpToolAnnotations(null, "non_idempotent_write"), "non_idempotent_write");
  });
});

describe("McpToolSource options", () => {
  it("fills in the contract's defaults", () => {
    const resolved = resolveMcpToolSourceOptions();
    assert.deepEqual({ ...resolved, onWarning: undefined }, {
      sourceName: "mcp", resourceAndPromptToolsEnabled: false, listingTtlMs: 300_000, listingFailureBackoffMs: 30_000,
      connectionTimeoutMs: 30_000, connectionAttempts: 3, requestTimeoutMs: 60_000, taskWaitTimeoutMs: 600_000, taskTtlMs: 86_400_000, onWarning: undefined,
    });
    assert.equal(new McpToolSource([]).sourceName, "mcp");
    assert.equal(new McpToolSource([], { sourceName: "tickets" }).sourceName, "tickets");
  });

  it("refuses bad options and server configs, naming the value", () => {
    assert.throws(() => resolveMcpToolSourceOptions({ listingTtlMs: -1 }), (error: unknown) => error instanceof InvalidInputError && error.message === "McpToolSource listingTtlMs -1 is invalid: use a non-negative number of milliseconds");
    assert.throws(() => resolveMcpToolSourceOptions({ connectionAttempts: 0 }), /connectionAttempts 0 is invalid/);
    assert.throws(() => resolveMcpToolSourceOptions({ sourceName: "" }), /sourceName "" is invalid/);
    assert.throws(() => resolveMcpServerConfigs([{ transport: "stdio", name: "a", command: "x" }, { transport: "stdio", name: "a", command: "y" }]), /two MCP servers are named a/);
    assert.throws(() => resolveMcpServerConfigs([{ transport: "streamable_http", name: "h", url: "ftp://example.com" }]), /MCP server h url "ftp:\/\/example.com\/" is invalid/);
    assert.throws(() => resolveMcpServerConfigs([{ transport: "websocket", name: "w" } as never]), /MCP server w transport "websocket" is invalid/);
  });

  it("declares the resource and prompt tools only when enabled and a server is configured", () => {
    const server = { transport: "stdio" as const, name: "a", command: "x" };
    assert.deepEqual(new McpToolSource([server]).declaredToolNames(), []);
    assert.deepEqual(new McpToolSource([], { resourceAndPromptToolsEnabled: true }).declaredToolNames(), []);
    assert.deepEqual(new McpToolSource([server], { resourceAndPromptToolsEnabled: true }).declaredToolNames(), ["mcp_list_resources_and_prompts", "mcp_read_resource", "mcp_get_prompt"]);
  });
});
