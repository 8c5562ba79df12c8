import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { AgentSessionFlow } from "@perdure/agents";
import { InvalidInputError } from "@perdure/engine";

/** True for a session Flow built by `createAgentSessionFlow` (or the Stepwise factory). */
export function isAgentSessionFlow(value: unknown): value is AgentSessionFlow {
  const candidate = value as { kind?: unknown; agentState?: unknown; getAgentSnapshot?: unknown } | null;
  return candidate?.kind === "flow" && typeof candidate.agentState === "object" && typeof candidate.getAgentSnapshot === "object";
}

/** Imports an entry module and returns every agent session Flow it exports, by Flow type. */
export async function loadAgentFlows(entryPath: string): Promise<Map<string, AgentSessionFlow>> {
  const absolute = resolve(entryPath);
  if (!existsSync(absolute)) throw new InvalidInputError(`entry module ${entryPath} does not exist (looked at ${absolute})`);
  const module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  const flows = new Map<string, AgentSessionFlow>();
  for (const value of Object.values(module)) {
    if (isAgentSessionFlow(value)) flows.set(value.flowType, value);
  }
  if (flows.size === 0) {
    throw new InvalidInputError(`entry module ${entryPath} exports no agent session Flow; export the result of createAgentSessionFlow or createStepwiseAgentSessionFlow`);
  }
  return flows;
}
