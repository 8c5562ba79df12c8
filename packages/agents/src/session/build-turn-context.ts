import type { StepContext } from "@perdure/engine";
import type { AgentTurnContext } from "../contract/agent-framework-runner.ts";
import type { AgentState } from "../contract/values/agent-state.ts";
import { isFinalToolCallStatus, type AgentToolCall, type AgentToolCallRecord } from "../contract/values/agent-tool-call.ts";
import { resolveToolPolicy } from "../contract/values/tool-effect.ts";
import { warnOfApprovalOverride } from "./approval-override-warning.ts";
import { builtInToolDefinition, type BuiltInToolDefinition } from "../contract/built-in-tool-definitions.ts";
import { createEventWriter } from "./event-writer.ts";
import type { SessionEnvironment } from "./session-environment.ts";
import { loadedMessages } from "./messages/loaded-messages.ts";
import { turnSessionSettingsOf } from "./settings/turn-session-settings.ts";
import type { ContextSummary } from "../contract/values/context-summary.ts";

/**
 * The summary the model input starts from: the stored `ContextSummary` under a
 * compaction policy, else null (a Flow built without one uses every message).
 */
export function activeContextSummary(context: StepContext, environment: SessionEnvironment): ContextSummary | null {
  if (environment.options.compaction === null) return null;
  return context.read(environment.persistence.contextSummary) ?? null;
}

export { loadedMessages };

/** The loaded tool call records of the turn, every round's, in the order the model made them. */
export function loadedToolCalls(context: StepContext, environment: SessionEnvironment): AgentToolCallRecord[] {
  const { agentToolCalls } = environment.persistence;
  return context.loadedKeys(agentToolCalls)
    .flatMap((key) => {
      const record = context.read(agentToolCalls.instance(key));
      return record === undefined ? [] : [record];
    })
    .sort((left, right) => left.deferralOrder - right.deferralOrder);
}

/** The built-in tools a turn offers: only `write_todos` while it plans, else every enabled one. */
export function enabledBuiltInToolsFor(environment: SessionEnvironment, state: AgentState): BuiltInToolDefinition[] {
  const names = environment.options.builtInTools;
  const offered = state.interactionMode === "planning" ? names.filter((name) => name === "write_todos") : names;
  return offered.map(builtInToolDefinition);
}

/** Builds what `runModelStep` and `buildUnfinishedTurnMessages` get, from committed state only. */
export function buildTurnContext(context: StepContext, environment: SessionEnvironment, state: AgentState, turnId: string): AgentTurnContext {
  const { options } = environment;
  const finalCalls = loadedToolCalls(context, environment).filter((record): record is AgentToolCall => isFinalToolCallStatus(record.status));
  const contextSummary = activeContextSummary(context, environment);
  const summarizedThrough = contextSummary?.lastSequence ?? 0;
  return {
    flowId: context.flowId,
    turnId,
    attempt: context.attempt,
    messages: loadedMessages(context, environment).filter((message) => message.sequence > summarizedThrough),
    toolCalls: finalCalls,
    frameworkRunState: context.read(environment.persistence.frameworkRunState) ?? null,
    interactionMode: state.interactionMode ?? "chat",
    resolveToolPolicy: (toolName, framework) => {
      warnOfApprovalOverride(environment, toolName, framework);
      return resolveToolPolicy(toolName, options.toolPolicies, options.defaultToolEffect, framework);
    },
    toolPolicies: options.toolPolicies,
    defaultToolEffect: options.defaultToolEffect,
    events: createEventWriter(context, environment.persistence, turnId),
    cancellationSignal: context.cancellationSignal,
    deadline: context.deadline,
    stepExecutionId: context.executionId,
    enabledBuiltInTools: enabledBuiltInToolsFor(environment, state),
    plan: context.read(environment.persistence.agentPlan) ?? null,
    contextSummary,
    sessionSettings: turnSessionSettingsOf(context, environment.persistence, turnId),
    heartbeat: () => context.heartbeat(),
  };
}
