import type { ResolvedAgentDefinition } from "./agent-definition.ts";
import type { ModelToolDefinition } from "./model-client.ts";
import type { ListedTool, ToolSource } from "./tool-source.ts";

/** The tools the sources offered in one model call, and who offered each. */
export interface SourceListing {
  tools: ModelToolDefinition[];
  bySource: Map<string, { source: ToolSource; tool: ListedTool }>;
}

function withTimeout<TValue>(work: Promise<TValue>, timeoutMs: number, sourceName: string): Promise<TValue> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tool source ${sourceName} did not list its tools within ${timeoutMs} ms`)), timeoutMs);
    work.then((value) => { clearTimeout(timer); resolve(value); }, (error: unknown) => { clearTimeout(timer); reject(error as Error); });
  });
}

/**
 * Lists every source, each for at most `toolSourceListingTimeoutMs`. A source
 * that throws or is slow offers nothing this time, with a warning, so a down
 * server never fails a turn.
 */
export async function listToolSources(definition: ResolvedAgentDefinition, signal: AbortSignal): Promise<SourceListing> {
  const listing: SourceListing = { tools: [], bySource: new Map() };
  const sources = [...definition.toolSources.values()];
  const listed = await Promise.all(sources.map(async (source) => {
    try {
      return await withTimeout(source.listTools({ signal }), definition.toolSourceListingTimeoutMs, source.sourceName);
    } catch (error) {
      console.warn(`perdure stepwise: tool source ${source.sourceName} offers no tools in this model call:`, error);
      return [];
    }
  }));
  for (const [index, tools] of listed.entries()) {
    const source = sources[index];
    if (source === undefined) continue;
    for (const tool of tools) {
      if (definition.tools.has(tool.name)) throw new TypeError(`tool ${tool.name} of a tool source uses the name of a function tool`);
      if (listing.bySource.has(tool.name)) throw new TypeError(`two tool sources list a tool named ${tool.name}`);
      listing.bySource.set(tool.name, { source, tool });
      listing.tools.push({ name: tool.name, description: tool.description, parameters: tool.parameters });
    }
  }
  return listing;
}
