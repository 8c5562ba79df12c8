/** The options of an `McpToolSource`, with every default written once. */
import { InvalidInputError } from "@perdure/engine";

export interface McpToolSourceOptions {
  /** Unique within the agent and stable across deploys. @default "mcp" */
  sourceName?: string;
  /** Offer `mcp_list_resources_and_prompts`, `mcp_read_resource` and `mcp_get_prompt`. @default false */
  resourceAndPromptToolsEnabled?: boolean;
  /** Age after which a server's tools are listed again in the background. @default 300_000 (5 minutes) */
  listingTtlMs?: number;
  /** How long a server whose listing failed is left alone. @default 30_000 */
  listingFailureBackoffMs?: number;
  /** Longest wait for a connection and its `initialize` handshake. @default 30_000 */
  connectionTimeoutMs?: number;
  /** Connection attempts before a request is given up as never sent. @default 3 */
  connectionAttempts?: number;
  /** Longest wait for the answer to a request other than `tools/call` (`tools/list`, resources, prompts). @default 60_000 */
  requestTimeoutMs?: number;
  /**
   * Longest wait, per tool Step attempt, for a `taskSupport: "required"`
   * tool's task, polled inside the Step; the task's TTL is four times this.
   * @default 600_000 (10 minutes)
   */
  taskWaitTimeoutMs?: number;
  /**
   * TTL requested for a task polled by `PollToolTask` (a Streamable HTTP
   * server without protocol sessions): the task's run time plus the longest
   * time no Worker serves the session.
   * @default 86_400_000 (24 hours)
   */
  taskTtlMs?: number;
  /** Where warnings go (a server left out of a listing, a name clash). @default console.warn */
  onWarning?: (message: string) => void;
}

export interface ResolvedMcpToolSourceOptions {
  sourceName: string;
  resourceAndPromptToolsEnabled: boolean;
  listingTtlMs: number;
  listingFailureBackoffMs: number;
  connectionTimeoutMs: number;
  connectionAttempts: number;
  requestTimeoutMs: number;
  taskWaitTimeoutMs: number;
  taskTtlMs: number;
  onWarning: (message: string) => void;
}

function readDuration(value: unknown, field: string, fallback: number, allowZero: boolean): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new InvalidInputError(`McpToolSource ${field} ${JSON.stringify(value)} is invalid: use a ${allowZero ? "non-negative" : "positive"} number of milliseconds`);
  }
  return value;
}

export function resolveMcpToolSourceOptions(options: McpToolSourceOptions = {}): ResolvedMcpToolSourceOptions {
  const sourceName = options.sourceName ?? "mcp";
  if (typeof sourceName !== "string" || sourceName === "") throw new InvalidInputError(`McpToolSource sourceName ${JSON.stringify(sourceName)} is invalid: give a non-empty string`);
  const resourceAndPromptToolsEnabled = options.resourceAndPromptToolsEnabled ?? false;
  if (typeof resourceAndPromptToolsEnabled !== "boolean") {
    throw new InvalidInputError(`McpToolSource resourceAndPromptToolsEnabled ${JSON.stringify(resourceAndPromptToolsEnabled)} is invalid: use true or false`);
  }
  const connectionAttempts = options.connectionAttempts ?? 3;
  if (!Number.isSafeInteger(connectionAttempts) || connectionAttempts < 1) {
    throw new InvalidInputError(`McpToolSource connectionAttempts ${JSON.stringify(connectionAttempts)} is invalid: use a positive integer`);
  }
  if (options.onWarning !== undefined && typeof options.onWarning !== "function") throw new InvalidInputError("McpToolSource onWarning must be a function");
  return {
    sourceName,
    resourceAndPromptToolsEnabled,
    listingTtlMs: readDuration(options.listingTtlMs, "listingTtlMs", 300_000, true),
    listingFailureBackoffMs: readDuration(options.listingFailureBackoffMs, "listingFailureBackoffMs", 30_000, true),
    connectionTimeoutMs: readDuration(options.connectionTimeoutMs, "connectionTimeoutMs", 30_000, false),
    connectionAttempts,
    requestTimeoutMs: readDuration(options.requestTimeoutMs, "requestTimeoutMs", 60_000, false),
    taskWaitTimeoutMs: readDuration(options.taskWaitTimeoutMs, "taskWaitTimeoutMs", 600_000, false),
    taskTtlMs: readDuration(options.taskTtlMs, "taskTtlMs", 86_400_000, false),
    onWarning: options.onWarning ?? ((message) => console.warn(`perdure mcp: ${message}`)),
  };
}
