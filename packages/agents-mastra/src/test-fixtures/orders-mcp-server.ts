/**
 * A small MCP server over stdio for the adapter's tests, run as a child
 * process: `lookup_order` is read-only, `cancel_order` is a write with no
 * idempotency hint. Each call appends a line to the file named by the first
 * argument, so a test sees how often each tool ran.
 *
 *   node orders-mcp-server.ts <calls.log>
 */
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const callLog = process.argv[2];
if (callLog === undefined) throw new Error("usage: node orders-mcp-server.ts <calls.log>");

const server = new McpServer({ name: "orders", version: "0.1.0" });
server.registerTool("lookup_order", {
  description: "Look up an order by its ID.",
  inputSchema: { order_id: z.string() },
  annotations: { readOnlyHint: true },
}, async ({ order_id }) => {
  appendFileSync(callLog, `lookup_order ${order_id}\n`);
  return { content: [{ type: "text", text: `order ${order_id} is packed` }] };
});
server.registerTool("cancel_order", {
  description: "Cancel an order.",
  inputSchema: { order_id: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true },
}, async ({ order_id }) => {
  appendFileSync(callLog, `cancel_order ${order_id}\n`);
  return { content: [{ type: "text", text: `order ${order_id} is cancelled` }] };
});
await server.connect(new StdioServerTransport());
