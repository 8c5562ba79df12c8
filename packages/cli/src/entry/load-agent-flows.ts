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

/**
 * Every agent session Flow among a module's exports, by Flow type. One Flow
 * exported under two names counts once; two different Flows with one Flow
 * type are refused, naming both exports, since a store keys sessions by Flow
 * type and one of them would be hidden.
 */
export function agentFlowsOf(exports: Record<string, unknown>, entryPath: string): Map<string, AgentSessionFlow> {
  const flows = new Map<string, AgentSessionFlow>();
  const exportNames = new Map<string, string>();
  for (const [exportName, value] of Object.entries(exports)) {
    if (!isAgentSessionFlow(value)) continue;
    const earlier = flows.get(value.flowType);
    if (earlier !== undefined && earlier !== value) {
      throw new InvalidInputError(`entry module ${entryPath} exports two agent session Flows with Flow type ${JSON.stringify(value.flowType)}: ${exportNames.get(value.flowType) ?? "?"} and ${exportName}; give each its own Flow type (the second argument of createStepwiseAgentSessionFlow)`);
    }
    flows.set(value.flowType, value);
    if (!exportNames.has(value.flowType)) exportNames.set(value.flowType, exportName);
  }
  if (flows.size === 0) {
    throw new InvalidInputError(`entry module ${entryPath} exports no agent session Flow; export the result of createAgentSessionFlow or createStepwiseAgentSessionFlow`);
  }
  return flows;
}

/** Imports an entry module and returns every agent session Flow it exports, by Flow type. */
export async function loadAgentFlows(entryPath: string): Promise<Map<string, AgentSessionFlow>> {
  const absolute = resolve(entryPath);
  if (!existsSync(absolute)) throw new InvalidInputError(`entry module ${entryPath} does not exist (looked at ${absolute})`);
  const module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  return agentFlowsOf(module, entryPath);
}
