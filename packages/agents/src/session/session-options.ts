import { InvalidInputError } from "@perdure/engine";
import { isToolEffect, type ToolEffect, type ToolPolicy } from "../contract/values/tool-effect.ts";
import type { AgentTracingOptions } from "../tracing/agent-tracing-options.ts";
import { builtInToolNames, isBuiltInToolName, type BuiltInToolName } from "../contract/built-in-tool-definitions.ts";
import { resolveMessageStorageOptions, type ResolvedMessageStorageOptions } from "./messages/message-storage-options.ts";

/** Keeps the model input under the context window; see `AgentSessionOptions.compaction`. */
export interface CompactionPolicy {
  /** The model's context window in tokens; a summary request must fit in it too. */
  contextWindowTokens: number;
  /**
   * Compact before a model call whose estimated input reaches this share of the window.
   * @default 0.85
   */
  triggerRatio?: number;
  /**
   * Share of the window the messages after the summary may keep.
   * @default 0.3
   */
  retainedRatio?: number;
}

/** A compaction policy with its defaults filled in. */
export interface ResolvedCompactionPolicy {
  contextWindowTokens: number;
  triggerRatio: number;
  retainedRatio: number;
}

/** Options of `createAgentSessionFlow`. */
export interface AgentSessionOptions {
  /**
   * Policies by tool name; they override framework metadata and the default effect.
   * @default {}
   */
  toolPolicies?: Readonly<Record<string, ToolPolicy>>;
  /**
   * Effect of a tool without a policy or framework metadata.
   * @default "unclassified"
   */
  defaultToolEffect?: ToolEffect;
  /**
   * Byte budget of the `AgentEvents` Stream, shared by every session of the Flow type.
   * @default 10_485_760 (10 MiB)
   */
  eventStreamCapacityBytes?: number;
  /**
   * Milliseconds after which a pending approval or question is rejected with
   * "approval deadline passed" or "question deadline passed".
   * @default none
   */
  interruptDeadlineMs?: number | null;
  /**
   * Built-in tools the session handles itself: `"ask_user"`, `"durable_wait"`,
   * `"write_todos"`. An enabled name is reserved: a tool policy for it is refused.
   * @default []
   */
  builtInTools?: readonly BuiltInToolName[];
  /**
   * Longest `durable_wait`, a positive multiple of 1,000; a longer
   * `duration_seconds` fails the call at once.
   * @default 31_536_000_000 (365 days)
   */
  maxDurableWaitMs?: number;
  /**
   * Most sub-agent sessions (`agentTool` calls) one turn may start, counted
   * over all its model responses as their calls are recorded; a call over
   * it fails at once, naming this option, and starts no child.
   * @default 10
   */
  maxSubAgentsPerTurn?: number;
  /**
   * Accept `planMode` user messages. Needs `"write_todos"` in `builtInTools`
   * and a runner whose `supportsPlanMode` is true.
   * @default false
   */
  planModeEnabled?: boolean;
  /**
   * Largest user message `send_user_message` accepts, in UTF-8 bytes.
   * @default 262_144 (256 KiB)
   */
  maxUserMessageBytes?: number;
  /**
   * Most user messages that may wait for a turn at once (queued by
   * `send_user_message`, or steered and not yet taken); one more is refused
   * with `QueuedUserMessagesFullError` and not stored. A Perdure extension.
   * @default 20
   */
  maxQueuedUserMessages?: number;
  /**
   * Most UTF-8 bytes of text those waiting messages may hold together; at
   * least `maxUserMessageBytes`. A Perdure extension.
   * @default 1_048_576 (1 MiB), or `maxUserMessageBytes` when that is larger
   */
  maxQueuedUserMessageBytes?: number;
  /**
   * OpenTelemetry GenAI spans; see `AgentTracingOptions` for each default.
   * @default on, with the global tracer provider
   */
  tracing?: AgentTracingOptions;
  /**
   * Summarize older messages before a model call whose input nears the
   * context window. Needs a runner with `estimateInputTokens`,
   * `selectCompactionCutoff` and `summarizeContext`.
   * @default none: every stored message is model input
   */
  compaction?: CompactionPolicy | null;
  /**
   * Most messages the `AgentMessages` window holds before its oldest move
   * into `AgentMessageChunks`; at least `messageChunkSize`.
   * @default 64
   */
  messageWindowSize?: number;
  /**
   * Most messages per archive chunk.
   * @default 32
   */
  messageChunkSize?: number;
  /**
   * Most bytes per archive chunk, measured on the JSON this core writes, 1 to
   * 8,388,608. A message whose chunk of one would be larger is stored
   * straight into its own chunk.
   * @default 1_048_576 (1 MiB)
   */
  messageChunkMaxBytes?: number;
  /**
   * With compaction, the stored messages retention always keeps: it deletes
   * the oldest chunk only while all of it is summarized and at least this
   * many messages follow it. `null` keeps every message.
   * @default 1_000
   */
  retainedMessageLimit?: number | null;
}

export interface ResolvedAgentSessionOptions extends ResolvedMessageStorageOptions {
  toolPolicies: Readonly<Record<string, ToolPolicy>>;
  defaultToolEffect: ToolEffect;
  eventStreamCapacityBytes: number;
  interruptDeadlineMs: number | null;
  maxUserMessageBytes: number;
  maxQueuedUserMessages: number;
  maxQueuedUserMessageBytes: number;
  builtInTools: readonly BuiltInToolName[];
  maxDurableWaitMs: number;
  maxSubAgentsPerTurn: number;
  planModeEnabled: boolean;
  compaction: ResolvedCompactionPolicy | null;
}

function resolveBuiltInTools(value: unknown): readonly BuiltInToolName[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidInputError(`builtInTools ${JSON.stringify(value)} is invalid: use a list of ${builtInToolNames.join(", ")}`);
  const names: BuiltInToolName[] = [];
  for (const name of value as unknown[]) {
    if (!isBuiltInToolName(name)) throw new InvalidInputError(`builtInTools entry ${JSON.stringify(name)} is not a built-in tool: use ${builtInToolNames.join(", ")}`);
    if (!names.includes(name)) names.push(name);
  }
  // Offered in one fixed order, whatever order the option lists them in.
  return builtInToolNames.filter((name) => names.includes(name));
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!Number.isSafeInteger(resolved) || resolved <= 0) {
    throw new InvalidInputError(`agent session option ${name} ${String(value)} is invalid: use a positive integer`);
  }
  return resolved;
}

function ratio(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (typeof resolved !== "number" || !(resolved > 0 && resolved <= 1)) {
    throw new InvalidInputError(`compaction.${name} ${String(value)} is invalid: use a number above 0 and at most 1`);
  }
  return resolved;
}

/** Validates a compaction policy and fills in its defaults (0.85 and 0.3). */
export function resolveCompactionPolicy(policy: CompactionPolicy | null | undefined): ResolvedCompactionPolicy | null {
  if (policy === undefined || policy === null) return null;
  if (typeof policy !== "object") throw new InvalidInputError(`compaction ${JSON.stringify(policy)} is invalid: use { contextWindowTokens, triggerRatio?, retainedRatio? }`);
  const contextWindowTokens = positiveInteger("compaction.contextWindowTokens", policy.contextWindowTokens, Number.NaN);
  const triggerRatio = ratio("triggerRatio", policy.triggerRatio, 0.85);
  const retainedRatio = ratio("retainedRatio", policy.retainedRatio, 0.3);
  if (retainedRatio >= triggerRatio) {
    throw new InvalidInputError(`compaction.retainedRatio ${retainedRatio} is invalid: keep it below triggerRatio ${triggerRatio}, or every model call would compact`);
  }
  return { contextWindowTokens, triggerRatio, retainedRatio };
}

/** Validates options and fills in every default (written once, here and in the TSDoc above). */
export function resolveAgentSessionOptions(options: AgentSessionOptions = {}): ResolvedAgentSessionOptions {
  const defaultToolEffect = options.defaultToolEffect ?? "unclassified";
  if (!isToolEffect(defaultToolEffect)) {
    throw new InvalidInputError(`defaultToolEffect ${JSON.stringify(defaultToolEffect)} is invalid: use read, idempotent_write, non_idempotent_write or unclassified`);
  }
  const toolPolicies = options.toolPolicies ?? {};
  for (const [name, policy] of Object.entries(toolPolicies)) {
    if (!isToolEffect(policy?.effect)) {
      throw new InvalidInputError(`toolPolicies.${name}.effect ${JSON.stringify(policy?.effect)} is invalid: use read, idempotent_write, non_idempotent_write or unclassified`);
    }
    if (policy.requiresApproval !== undefined && typeof policy.requiresApproval !== "boolean") {
      throw new InvalidInputError(`toolPolicies.${name}.requiresApproval ${JSON.stringify(policy.requiresApproval)} is invalid: use true or false`);
    }
  }
  const builtInTools = resolveBuiltInTools(options.builtInTools);
  for (const name of builtInTools) {
    if (Object.hasOwn(toolPolicies, name)) {
      throw new InvalidInputError(`toolPolicies.${name} is refused: ${name} is an enabled built-in tool, whose policy is fixed (read, no approval)`);
    }
  }
  const maxDurableWaitMs = positiveInteger("maxDurableWaitMs", options.maxDurableWaitMs, 365 * 24 * 3_600_000);
  if (maxDurableWaitMs % 1000 !== 0) throw new InvalidInputError(`agent session option maxDurableWaitMs ${maxDurableWaitMs} is invalid: use a positive multiple of 1000`);
  const planModeEnabled = options.planModeEnabled ?? false;
  if (typeof planModeEnabled !== "boolean") throw new InvalidInputError(`planModeEnabled ${JSON.stringify(planModeEnabled)} is invalid: use true or false`);
  if (planModeEnabled && !builtInTools.includes("write_todos")) {
    throw new InvalidInputError('planModeEnabled needs "write_todos" in builtInTools: a planning turn writes its plan with it');
  }
  const deadline = options.interruptDeadlineMs ?? null;
  const maxUserMessageBytes = positiveInteger("maxUserMessageBytes", options.maxUserMessageBytes, 256 * 1024);
  const maxQueuedUserMessageBytes = positiveInteger("maxQueuedUserMessageBytes", options.maxQueuedUserMessageBytes, Math.max(1024 * 1024, maxUserMessageBytes));
  if (maxQueuedUserMessageBytes < maxUserMessageBytes) {
    throw new InvalidInputError(`agent session option maxQueuedUserMessageBytes ${maxQueuedUserMessageBytes} is invalid: use at least maxUserMessageBytes (${maxUserMessageBytes}), or the largest message could never be sent`);
  }
  return {
    toolPolicies,
    defaultToolEffect,
    eventStreamCapacityBytes: positiveInteger("eventStreamCapacityBytes", options.eventStreamCapacityBytes, 10 * 1024 * 1024),
    interruptDeadlineMs: deadline === null ? null : positiveInteger("interruptDeadlineMs", deadline, 1),
    maxUserMessageBytes,
    maxQueuedUserMessages: positiveInteger("maxQueuedUserMessages", options.maxQueuedUserMessages, 20),
    maxQueuedUserMessageBytes,
    builtInTools,
    maxDurableWaitMs,
    maxSubAgentsPerTurn: positiveInteger("maxSubAgentsPerTurn", options.maxSubAgentsPerTurn, 10),
    planModeEnabled,
    compaction: resolveCompactionPolicy(options.compaction),
    ...resolveMessageStorageOptions(options),
  };
}
