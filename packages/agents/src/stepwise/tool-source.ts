/**
 * The `ToolSource` contract: tools listed at run time (such as an MCP
 * server's), offered after the function tools.
 */
import type {
  DeferredToolCall,
  DeferredToolExecution,
  ToolExecutionResult,
  ToolTaskCancellation,
  ToolTaskPoll,
  ToolTaskPollOutcome,
  ToolTaskStarted,
} from "../contract/agent-framework-runner.ts";
import type { FrameworkToolPolicy, ResolvedToolPolicy, ToolEffect } from "../contract/values/tool-effect.ts";
import type { ModelToolDefinition } from "./model-client.ts";

/** A tool a source listed, with the policy metadata it declares. */
export interface ListedTool extends ModelToolDefinition {
  effect?: ToolEffect;
  requiresApproval?: boolean;
}

/** What `deferredToolCall` gets: the call and the definition that was offered. */
export interface ToolSourceCallRequest {
  toolCallId: string;
  toolName: string;
  arguments: string;
  /** The definition offered in this model call, so a refreshed listing cannot change it. */
  listedTool: ListedTool;
  /** Resolves the policy: session policies win over the source's metadata. */
  resolveToolPolicy: (toolName: string, frameworkEffect?: ToolEffect | FrameworkToolPolicy) => ResolvedToolPolicy;
}

/** A call handed back to its source to run, with the source's own reference. */
export interface ToolSourceExecution extends DeferredToolExecution {
  /** What the source put in `toolSourceReference`, or null. */
  reference: unknown;
}

/** Tools listed at run time. Names must be unique and stable across deploys. */
export interface ToolSource {
  readonly sourceName: string;
  listTools(options: { signal: AbortSignal }): Promise<ListedTool[]>;
  /** Builds the deferred call; `toolSourceReference` is the source's own reference (any JSON). */
  deferredToolCall(request: ToolSourceCallRequest): Omit<DeferredToolCall, "toolSourceReference"> & { reference?: unknown };
  /** A `ToolTaskStarted` needs `pollToolTask`; without it the call fails with `missingToolTaskPoller`. */
  executeDeferredToolCall(execution: ToolSourceExecution): Promise<ToolExecutionResult | ToolTaskStarted>;
  /** Polls a task this source's call started, with the source's reference. */
  pollToolTask?(poll: ToolTaskPoll & { reference: unknown }): Promise<ToolTaskPollOutcome>;
  /** Stops an abandoned task of this source best-effort, idempotent by `taskId`. */
  cancelToolTask?(cancellation: ToolTaskCancellation & { reference: unknown }): Promise<void>;
  /** Names the source always lists, checked when the runner is built. */
  declaredToolNames?(): readonly string[];
  /** The source's last listing, without I/O (for input token estimates). */
  cachedTools?(): readonly ListedTool[];
}
