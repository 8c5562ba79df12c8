/**
 * The MCP servers an `McpToolSource` reaches, as configured on the Worker.
 * A stdio server's command runs with the Worker's privileges, so these never
 * come from Flow input, a user message, or a browser.
 */
import { InvalidInputError } from "@perdure/engine";

/** A server the Worker starts as a child process and speaks to over stdin and stdout. */
export interface McpStdioServerConfig {
  transport: "stdio";
  /** Unique within the source; the prefix of its tools' names (`<name>__<tool>`). */
  name: string;
  command: string;
  /** @default [] */
  args?: readonly string[];
  /** Added to the SDK's small default environment (HOME, PATH, ...). @default {} */
  env?: Readonly<Record<string, string>>;
  /** @default the Worker's working directory */
  cwd?: string;
  /** Read `readOnlyHint` and `idempotentHint` to pick effects. @default true */
  trustsToolAnnotations?: boolean;
}

/** A server reached over MCP Streamable HTTP. */
export interface McpStreamableHttpServerConfig {
  transport: "streamable_http";
  name: string;
  url: string | URL;
  /** Sent with every HTTP request, such as `Authorization`. @default {} */
  headers?: Readonly<Record<string, string>>;
  /** @default true */
  trustsToolAnnotations?: boolean;
}

export type McpServerConfig = McpStdioServerConfig | McpStreamableHttpServerConfig;

/** A validated server configuration. */
export type ResolvedMcpServerConfig =
  | { transport: "stdio"; name: string; command: string; args: readonly string[]; env: Readonly<Record<string, string>>; cwd: string | undefined; trustsToolAnnotations: boolean }
  | { transport: "streamable_http"; name: string; url: URL; headers: Readonly<Record<string, string>>; trustsToolAnnotations: boolean };

function readStringRecord(value: unknown, field: string, serverName: string): Readonly<Record<string, string>> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.values(value).every((item) => typeof item === "string")) {
    throw new InvalidInputError(`MCP server ${serverName} ${field} must be an object of strings`);
  }
  return { ...(value as Record<string, string>) };
}

function resolveServer(server: McpServerConfig): ResolvedMcpServerConfig {
  if (typeof server !== "object" || server === null) throw new InvalidInputError(`MCP server config ${JSON.stringify(server)} is invalid: give an object`);
  const { name } = server;
  if (typeof name !== "string" || name === "") throw new InvalidInputError(`MCP server name ${JSON.stringify(name)} is invalid: give a non-empty string`);
  const trustsToolAnnotations = server.trustsToolAnnotations ?? true;
  if (typeof trustsToolAnnotations !== "boolean") throw new InvalidInputError(`MCP server ${name} trustsToolAnnotations ${JSON.stringify(trustsToolAnnotations)} is invalid: use true or false`);
  if (server.transport === "stdio") {
    if (typeof server.command !== "string" || server.command === "") throw new InvalidInputError(`MCP server ${name} command ${JSON.stringify(server.command)} is invalid: give a non-empty string`);
    const args = server.args ?? [];
    if (!Array.isArray(args) || !args.every((item) => typeof item === "string")) throw new InvalidInputError(`MCP server ${name} args must be a list of strings`);
    if (server.cwd !== undefined && typeof server.cwd !== "string") throw new InvalidInputError(`MCP server ${name} cwd must be a string`);
    return { transport: "stdio", name, command: server.command, args: [...args], env: readStringRecord(server.env, "env", name), cwd: server.cwd, trustsToolAnnotations };
  }
  if (server.transport === "streamable_http") {
    let url: URL;
    try {
      url = new URL(String(server.url));
    } catch {
      throw new InvalidInputError(`MCP server ${name} url ${JSON.stringify(String(server.url))} is invalid: give an http or https URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new InvalidInputError(`MCP server ${name} url ${JSON.stringify(url.href)} is invalid: give an http or https URL`);
    return { transport: "streamable_http", name, url, headers: readStringRecord(server.headers, "headers", name), trustsToolAnnotations };
  }
  throw new InvalidInputError(`MCP server ${name} transport ${JSON.stringify((server as { transport?: unknown }).transport)} is invalid: use "stdio" or "streamable_http"`);
}

/** Validates the servers; names must be unique. */
export function resolveMcpServerConfigs(servers: readonly McpServerConfig[]): ResolvedMcpServerConfig[] {
  if (!Array.isArray(servers)) throw new InvalidInputError("McpToolSource servers must be a list of server configs");
  const resolved = servers.map(resolveServer);
  const seen = new Set<string>();
  for (const server of resolved) {
    if (seen.has(server.name)) throw new InvalidInputError(`two MCP servers are named ${server.name}; give each a unique name`);
    seen.add(server.name);
  }
  return resolved;
}
