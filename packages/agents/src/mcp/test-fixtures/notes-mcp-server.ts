/**
 * A small MCP server for the tests, built on the SDK's own server classes:
 * `node notes-mcp-server.ts stdio` speaks over stdin and stdout;
 * `node notes-mcp-server.ts http <port>` serves Streamable HTTP on loopback,
 * with protocol sessions. Every tool call and HTTP request is recorded in
 * the InvocationLog at `NOTES_MCP_LOG`, with the idempotency key the call
 * carried. `NOTES_MCP_GATES` names a folder of FileGates that parked tools
 * wait on; `NOTES_MCP_TOOLSET` picks extra tools for naming tests.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { FileGate } from "../../testing/file-gate.ts";
import { InvocationLog } from "../../testing/invocation-log.ts";

const idempotencyKeyMetaKey = "io.perdure/idempotencyKey";
const log = process.env.NOTES_MCP_LOG === undefined ? undefined : new InvocationLog(process.env.NOTES_MCP_LOG);
const gates = process.env.NOTES_MCP_GATES;
const taskStore = new InMemoryTaskStore();
const notes = new Map<string, string>([["welcome", "Hello from the notes server."]]);

function keyOf(extra: { _meta?: Record<string, unknown> | undefined }): unknown {
  return extra._meta?.[idempotencyKeyMetaKey] ?? null;
}

function text(value: string): { content: { type: "text"; text: string }[] } {
  return { content: [{ type: "text", text: value }] };
}

async function parkAt(gateName: string, signal: AbortSignal): Promise<void> {
  if (gates === undefined) return;
  await new FileGate(gates, gateName).waitUntilOpen({ signal });
}

function buildServer(): McpServer {
  const server = new McpServer({ name: "notes", version: "1.0.0" }, {
    capabilities: { tasks: { requests: { tools: { call: {} } } } },
    taskStore,
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  });
  server.registerTool("read_note", {
    description: "Read a note by its title.",
    inputSchema: { title: z.string() },
    annotations: { readOnlyHint: true },
  }, async ({ title }, extra) => {
    log?.record("read_note", { title, key: keyOf(extra) });
    return text(notes.get(title) ?? `no note titled ${title}`);
  });
  server.registerTool("save_note", {
    description: "Save a note under a title, replacing any earlier text.",
    inputSchema: { title: z.string(), body: z.string() },
    annotations: { idempotentHint: true, destructiveHint: true },
  }, async ({ title, body }, extra) => {
    log?.record("save_note", { title, body, key: keyOf(extra) });
    notes.set(title, body);
    return text(`saved ${title}`);
  });
  server.registerTool("email_note", {
    description: "Email a note to someone.",
    inputSchema: { title: z.string(), to: z.string() },
  }, async ({ title, to }, extra) => {
    log?.record("email_note", { title, to, key: keyOf(extra) });
    return text(`emailed ${title} to ${to}`);
  });
  server.registerTool("failing_note", {
    description: "Always fails.",
    inputSchema: {},
    annotations: { readOnlyHint: true },
  }, async (_arguments, extra) => {
    log?.record("failing_note", { key: keyOf(extra) });
    return { content: [{ type: "text", text: "the note store is read-only today" }], isError: true };
  });
  server.registerTool("note_stats", {
    description: "Counts notes, with progress.",
    inputSchema: {},
    annotations: { readOnlyHint: true },
  }, async (_arguments, extra) => {
    log?.record("note_stats", { key: keyOf(extra) });
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      for (let step = 1; step <= 3; step += 1) {
        await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: step, total: 3, message: `step ${step}` } });
      }
    }
    return { content: [{ type: "text", text: "notes: 1" }, { type: "resource_link", uri: "notes://welcome", name: "welcome" }] };
  });
  server.registerTool("parked_read", {
    description: "A read that waits at the parked-read gate.",
    inputSchema: {},
    annotations: { readOnlyHint: true },
  }, async (_arguments, extra) => {
    log?.record("parked_read", { key: keyOf(extra) });
    await parkAt("parked-read", extra.signal);
    return text("parked read done");
  });
  server.registerTool("parked_write", {
    description: "A write that waits at the parked-write gate.",
    inputSchema: {},
  }, async (_arguments, extra) => {
    log?.record("parked_write", { key: keyOf(extra) });
    await parkAt("parked-write", extra.signal);
    return text("parked write done");
  });
  server.experimental.tasks.registerToolTask("index_notes", {
    description: "Indexes the notes, as a task.",
    inputSchema: {},
    execution: { taskSupport: "required" },
  }, {
    createTask: async (_arguments, extra) => {
      const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60_000, pollInterval: 200 });
      log?.record("index_notes", { key: keyOf(extra), ttl: extra.taskRequestedTtl ?? null });
      const runMs = Number(process.env.NOTES_MCP_TASK_MS ?? "900");
      setTimeout(() => { void extra.taskStore.storeTaskResult(task.taskId, "completed", text(`indexed ${notes.size} notes`)).catch(() => undefined); }, runMs);
      return { task };
    },
    getTask: async (_arguments, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_arguments, extra) => extra.taskStore.getTaskResult(extra.taskId) as never,
  });
  server.experimental.tasks.registerToolTask("confirm_note", {
    description: "Asks the user to confirm, as a task.",
    inputSchema: {},
    execution: { taskSupport: "required" },
  }, {
    createTask: async (_arguments, extra) => {
      const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60_000, pollInterval: 100 });
      await extra.taskStore.updateTaskStatus(task.taskId, "input_required", "confirm the note");
      return { task };
    },
    getTask: async (_arguments, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_arguments, extra) => extra.taskStore.getTaskResult(extra.taskId) as never,
  });
  if (process.env.NOTES_MCP_TOOLSET === "clash") {
    server.registerTool("read.note", { description: "Same agent name as read_note.", inputSchema: {} }, async () => text("clash"));
  }
  server.registerResource("welcome", "notes://welcome", { mimeType: "text/plain", description: "The welcome note." }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: notes.get("welcome") ?? "" }],
  }));
  server.registerPrompt("summarize", { description: "Summarize a note.", argsSchema: { title: z.string() } }, ({ title }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Summarize the note ${title}.` } }],
  }));
  return server;
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString("utf8");
  return body === "" ? undefined : JSON.parse(body);
}

async function serveHttp(port: number): Promise<void> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const httpServer = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const sessionId = request.headers["mcp-session-id"];
      const body = request.method === "POST" ? await readBody(request) : undefined;
      const method = (body as { method?: unknown } | undefined)?.method;
      const toolName = (body as { params?: { name?: unknown } } | undefined)?.params?.name;
      log?.record("http_request", { method: request.method, rpc: method ?? null, session: sessionId ?? null });
      // Answers a real gateway could give after the server ran the call.
      if (method === "tools/call" && toolName === "gateway_error") {
        response.writeHead(502).end("bad gateway");
        return;
      }
      if (method === "tools/call" && toolName === "internal_error") {
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: (body as { id: unknown }).id, error: { code: -32603, message: "internal error" } }));
        return;
      }
      let transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
      if (transport === undefined) {
        if (typeof sessionId === "string") {
          response.writeHead(404).end("unknown session");
          return;
        }
        const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => { sessions.set(id, created); } });
        created.onclose = () => { if (created.sessionId !== undefined) sessions.delete(created.sessionId); };
        await buildServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(request, response, body);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(port, "127.0.0.1", resolve));
  // Port 0 asks the system for a free one: the line tells which.
  process.stdout.write(`notes-mcp-server listening on ${(httpServer.address() as AddressInfo).port}\n`);
}

/** Without protocol sessions: every request gets its own transport; tasks live in the process's task store. */
async function serveStatelessHttp(port: number): Promise<void> {
  const httpServer = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const body = request.method === "POST" ? await readBody(request) : undefined;
      log?.record("http_request", { method: request.method, rpc: (body as { method?: unknown } | undefined)?.method ?? null, session: request.headers["mcp-session-id"] ?? null });
      if (request.method !== "POST") {
        response.writeHead(405).end("method not allowed");
        return;
      }
      const transport = new StreamableHTTPServerTransport({});
      await buildServer().connect(transport);
      response.on("close", () => { void transport.close(); });
      await transport.handleRequest(request, response, body);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(port, "127.0.0.1", resolve));
  // Port 0 asks the system for a free one: the line tells which.
  process.stdout.write(`notes-mcp-server listening on ${(httpServer.address() as AddressInfo).port}\n`);
}

const [mode, portText] = process.argv.slice(2);
if (mode === "stdio") {
  await buildServer().connect(new StdioServerTransport());
  process.stdin.on("end", () => process.exit(0));
} else if (mode === "http") {
  await serveHttp(Number(portText));
} else if (mode === "http-stateless") {
  await serveStatelessHttp(Number(portText));
} else {
  throw new Error(`usage: notes-mcp-server.ts stdio | http <port> | http-stateless <port>; got ${JSON.stringify(mode)}`);
}
