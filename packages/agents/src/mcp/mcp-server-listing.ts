/**
 * One server's tool listing, cached per Worker: the first listing is
 * awaited; after `listingTtlMs` the server is listed again in the background
 * while its earlier tools are returned; a failed listing leaves the server
 * alone for `listingFailureBackoffMs`, then it is tried in the background.
 * One listing per server runs at a time.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describeError, everyPage, withMcpConnection } from "./mcp-connection.ts";
import type { ResolvedMcpServerConfig } from "./mcp-server-config.ts";
import type { ResolvedMcpToolSourceOptions } from "./mcp-tool-source-options.ts";

/** Lists every page of a server's tools on a new connection. */
async function fetchServerTools(server: ResolvedMcpServerConfig, options: ResolvedMcpToolSourceOptions): Promise<Tool[]> {
  return withMcpConnection(server, options, ({ client }) => everyPage(async (cursor) => {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: options.requestTimeoutMs });
    return { items: page.tools, nextCursor: page.nextCursor };
  }));
}

export class McpServerListing {
  readonly server: ResolvedMcpServerConfig;
  private readonly options: ResolvedMcpToolSourceOptions;
  private readonly now: () => number;
  private tools: Tool[] | undefined;
  private listedAt = 0;
  private failedAt: number | undefined;
  private inFlight: Promise<void> | undefined;
  /** How many listings were started, for tests and diagnostics. */
  listingCount = 0;

  constructor(server: ResolvedMcpServerConfig, options: ResolvedMcpToolSourceOptions, now: () => number) {
    this.server = server;
    this.options = options;
    this.now = now;
  }

  /** The last successful listing, without I/O. */
  cached(): readonly Tool[] {
    return this.tools ?? [];
  }

  /** Starts a listing, or joins the one that runs. */
  private list(): Promise<void> {
    if (this.inFlight !== undefined) return this.inFlight;
    this.listingCount += 1;
    this.inFlight = (async () => {
      try {
        this.tools = await fetchServerTools(this.server, this.options);
        this.listedAt = this.now();
        this.failedAt = undefined;
      } catch (error) {
        this.failedAt = this.now();
        const kept = this.tools === undefined ? "offers no tools" : "keeps the tools of its last listing";
        this.options.onWarning(`MCP server ${this.server.name} ${kept}: listing its tools failed (${describeError(error)}); it is tried again in the background after ${this.options.listingFailureBackoffMs} ms`);
      } finally {
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }

  private inBackoff(): boolean {
    return this.failedAt !== undefined && this.now() - this.failedAt < this.options.listingFailureBackoffMs;
  }

  /** The tools to offer now, listing first, or in the background, as the cache rules say. */
  async current(refresh: boolean): Promise<readonly Tool[]> {
    if (refresh) {
      await this.list();
    } else if (this.tools === undefined) {
      if (this.failedAt === undefined) await this.list();
      else if (!this.inBackoff()) void this.list();
    } else if (this.now() - this.listedAt >= this.options.listingTtlMs && !this.inBackoff()) {
      void this.list();
    }
    return this.cached();
  }
}
