import { InvalidInputError } from "@perdure/engine";
import type { InteractionMode } from "../values/agent-state.ts";
import { isToolEffect, type ToolEffect, type ToolPolicy } from "../values/tool-effect.ts";
import type { FunctionTool } from "./function-tool.ts";
import type { ModelClient, ModelSettings } from "./model-client.ts";
import type { ToolSource } from "./tool-source.ts";

/** What an instructions function gets, evaluated in every `RunModel`. */
export interface InstructionContext {
  flowId: string;
  turnId: string;
  attempt: number;
  interactionMode: InteractionMode;
  /** Plans arrive with plan mode; null until then. */
  plan: null;
}

/** A Stepwise agent. */
export interface AgentDefinition {
  name: string;
  /** A string, or a function evaluated in every `RunModel`, so a deploy changes the next model call. */
  instructions: string | ((context: InstructionContext) => string | Promise<string>);
  model: ModelClient;
  /** Passed to the model unchanged. @default none */
  modelSettings?: ModelSettings;
  /** @default [] */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own argument type
  tools?: readonly FunctionTool<any>[];
  /** Listed in every `RunModel`. @default [] */
  toolSources?: readonly ToolSource[];
  /** Override a function tool's own effect and approval. @default {} */
  toolPolicies?: Readonly<Record<string, ToolPolicy>>;
  /** Effect of a tool that declares none. @default "unclassified" */
  defaultToolEffect?: ToolEffect;
  /** After this many model calls in one turn, the next call offers no tools. @default 100 */
  maxModelCallsPerTurn?: number;
  /** Longest wait for one source's `listTools`. @default 10_000 */
  toolSourceListingTimeoutMs?: number;
  /** Passed to the session options. @default none */
  interruptDeadlineMs?: number | null;
  /** Passed to the session options. @default 10_485_760 */
  eventStreamCapacityBytes?: number;
}

export interface ResolvedAgentDefinition {
  name: string;
  instructions: AgentDefinition["instructions"];
  model: ModelClient;
  modelSettings: ModelSettings | undefined;
  tools: ReadonlyMap<string, FunctionTool>;
  toolSources: ReadonlyMap<string, ToolSource>;
  toolPolicies: Readonly<Record<string, ToolPolicy>>;
  defaultToolEffect: ToolEffect;
  maxModelCallsPerTurn: number;
  toolSourceListingTimeoutMs: number;
}

/** Validates a definition and fills in every default (written once, here and in the TSDoc above). */
export function resolveAgentDefinition(definition: AgentDefinition): ResolvedAgentDefinition {
  if (typeof definition?.name !== "string" || definition.name === "") throw new InvalidInputError(`agent name ${JSON.stringify(definition?.name)} is invalid: give a non-empty string`);
  if (typeof definition.instructions !== "string" && typeof definition.instructions !== "function") {
    throw new InvalidInputError(`agent ${definition.name} instructions must be a string or a function`);
  }
  if (typeof definition.model?.call !== "function") throw new InvalidInputError(`agent ${definition.name} model must be a ModelClient (an object with call(request))`);
  const tools = new Map<string, FunctionTool>();
  for (const tool of definition.tools ?? []) {
    if (tool?.kind !== "function_tool") throw new InvalidInputError(`agent ${definition.name} tools must be made with functionTool`);
    if (tools.has(tool.name)) throw new InvalidInputError(`agent ${definition.name} has two tools named ${tool.name}`);
    tools.set(tool.name, tool as FunctionTool);
  }
  const toolSources = new Map<string, ToolSource>();
  for (const source of definition.toolSources ?? []) {
    if (typeof source?.sourceName !== "string" || source.sourceName === "") throw new InvalidInputError(`agent ${definition.name} has a tool source without a sourceName`);
    if (toolSources.has(source.sourceName)) throw new InvalidInputError(`agent ${definition.name} has two tool sources named ${source.sourceName}; give each a unique sourceName`);
    for (const name of source.declaredToolNames?.() ?? []) {
      if (tools.has(name)) throw new TypeError(`tool ${name} of a tool source uses the name of a function tool`);
    }
    toolSources.set(source.sourceName, source);
  }
  const defaultToolEffect = definition.defaultToolEffect ?? "unclassified";
  if (!isToolEffect(defaultToolEffect)) throw new InvalidInputError(`defaultToolEffect ${JSON.stringify(defaultToolEffect)} is invalid`);
  const maxModelCallsPerTurn = definition.maxModelCallsPerTurn ?? 100;
  if (!Number.isSafeInteger(maxModelCallsPerTurn) || maxModelCallsPerTurn < 1) {
    throw new InvalidInputError(`maxModelCallsPerTurn ${String(definition.maxModelCallsPerTurn)} is invalid: use a positive integer`);
  }
  const toolSourceListingTimeoutMs = definition.toolSourceListingTimeoutMs ?? 10_000;
  if (!Number.isFinite(toolSourceListingTimeoutMs) || toolSourceListingTimeoutMs <= 0) {
    throw new InvalidInputError(`toolSourceListingTimeoutMs ${String(definition.toolSourceListingTimeoutMs)} is invalid: use a positive number`);
  }
  return {
    name: definition.name,
    instructions: definition.instructions,
    model: definition.model,
    modelSettings: definition.modelSettings,
    tools,
    toolSources,
    toolPolicies: definition.toolPolicies ?? {},
    defaultToolEffect,
    maxModelCallsPerTurn,
    toolSourceListingTimeoutMs,
  };
}
