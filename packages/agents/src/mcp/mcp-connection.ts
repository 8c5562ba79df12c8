/**
 * One connection per request: a new transport and client, the `initialize`
 * handshake within `connectionTimeoutMs`, tried `connectionAttempts` times;
 * ended with an HTTP `DELETE` of the protocol session (Streamable HTTP) and
 * closed, so no protocol session outlives the request.
 */
import { setTimeout as delay } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ResolvedMcpServerConfig } from "./mcp-server-config.ts";

/** The client name and version this package announces in `initialize`. */
export const mcpClientInfo = { name: "perdure-agents", version: "0.1.0" } as const;

/** An open connection to one server. */
export interface McpConnection {
  readonly server: ResolvedMcpServerConfig;
  readonly client: Client;
  readonly transport: Transport;
  /** Ends the protocol session (HTTP `DELETE`) and closes the transport; never throws. */
  close(): Promise<void>;
}

/** Every connection attempt failed, so the request was never sent. */
export class McpConnectionFailedError extends Error {
  readonly code = "mcp_connection_failed";

  constructor(serverName: string, attempts: number, detail: string, options?: { cause?: unknown }) {
    super(`could not connect to MCP server ${serverName} in ${attempts} attempt${attempts === 1 ? "" : "s"}: ${detail}`, options);
    this.name = "McpConnectionFailedError";
  }
}

function createTransport(server: ResolvedMcpServerConfig): Transport {
  if (server.transport === "stdio") {
    return new StdioClientTransport({
      command: server.command,
      args: [...server.args],
      env: { ...server.env },
      ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
      stderr: "inherit",
    });
  }
  return new StreamableHTTPClientTransport(server.url, { requestInit: { headers: { ...server.headers } } });
}

async function closeConnection(client: Client, transport: Transport): Promise<void> {
  if (transport instanceof StreamableHTTPClientTransport) {
    // A server that does not keep protocol sessions has no session ID, and the SDK then sends nothing.
    await transport.terminateSession().catch(() => undefined);
  }
  await client.close().catch(() => undefined);
}

/** Every item of a paged MCP list (`tools/list`, `resources/list`, …), following `nextCursor` to the end. */
export async function everyPage<TItem>(fetchPage: (cursor: string | undefined) => Promise<{ items: TItem[]; nextCursor?: string | undefined }>): Promise<TItem[]> {
  const items: TItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return items;
}

/**
 * True when the server answered the request with a JSON-RPC error, as
 * opposed to the SDK's own errors for a closed connection or a timeout
 * (which say nothing about what the server did).
 */
export function isMcpErrorAnswer(error: unknown): error is McpError {
  return error instanceof McpError && error.code !== (ErrorCode.ConnectionClosed as number) && error.code !== (ErrorCode.RequestTimeout as number);
}

/**
 * An MCP error answer's text with the SDK's `MCP error <code>: ` prefix
 * once. A server built on the SDK answers with its own `McpError`'s message,
 * which has the prefix already, and the client's `McpError` adds it again.
 */
export function mcpErrorAnswerText(message: string): string {
  return message.replace(/^(MCP error -?\d+: )(?:MCP error -?\d+: )+/, "$1");
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export interface OpenMcpConnectionOptions {
  connectionTimeoutMs: number;
  connectionAttempts: number;
  signal?: AbortSignal | undefined;
}

/** Connects and initializes, trying `connectionAttempts` times; throws `McpConnectionFailedError` when none works. */
export async function openMcpConnection(server: ResolvedMcpServerConfig, options: OpenMcpConnectionOptions): Promise<McpConnection> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= options.connectionAttempts; attempt += 1) {
    options.signal?.throwIfAborted();
    const transport = createTransport(server);
    // No elicitation, sampling or roots capability: a server cannot send those requests.
    const client = new Client({ ...mcpClientInfo }, { capabilities: {} });
    client.onerror = () => undefined;
    try {
      await client.connect(transport, { timeout: options.connectionTimeoutMs, ...(options.signal === undefined ? {} : { signal: options.signal }) });
      return { server, client, transport, close: () => closeConnection(client, transport) };
    } catch (error) {
      lastError = error;
      await closeConnection(client, transport);
      if (attempt < options.connectionAttempts) await delay(250 * attempt, undefined, options.signal === undefined ? {} : { signal: options.signal });
    }
  }
  throw new McpConnectionFailedError(server.name, options.connectionAttempts, describeError(lastError), { cause: lastError });
}

/** Runs `work` on a new connection and always ends the connection. */
export async function withMcpConnection<TResult>(server: ResolvedMcpServerConfig, options: OpenMcpConnectionOptions, work: (connection: McpConnection) => Promise<TResult>): Promise<TResult> {
  const connection = await openMcpConnection(server, options);
  try {
    return await work(connection);
  } finally {
    await connection.close();
  }
}
