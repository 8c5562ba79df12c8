/**
 * The attribute keys of the session's spans: the GenAI semantic conventions
 * (per version) and the engine attributes under `perdure.*`.
 */
import type { StepContext } from "@perdure/engine";
import type { ModelCallMetadata } from "../contract/agent-framework-runner.ts";
import type { AgentUsage } from "../contract/values/agent-usage.ts";
import type { GenAISemanticConventionsVersion } from "./agent-tracing-options.ts";

/** An attribute value the spans use. */
export type SpanAttributeValue = string | number | boolean | string[];
export type SpanAttributes = Record<string, SpanAttributeValue>;

/** The engine attributes every span carries, under our own prefix. */
export const perdureAttributeKeys = {
  flowId: "perdure.flow.id",
  /** The contract's `dex.run.id`; one Perdure Flow instance is one run, so it is the flow ID. */
  runId: "perdure.run.id",
  stepType: "perdure.step.type",
  stepExecutionId: "perdure.step.execution_id",
  stepAttempt: "perdure.step.attempt",
  turnId: "perdure.agent.turn.id",
  inputMessagesLastKey: "perdure.agent.input_messages.last_key",
  outputMessagesKeys: "perdure.agent.output_messages.keys",
  requestedToolCallIds: "perdure.agent.requested_tool_call.ids",
} as const;

/**
 * What every span of a Step attempt carries: the Flow ID four times (a flow
 * ID names one run, so it is also the run ID), the Step, the turn and the
 * agent.
 */
export function commonSpanAttributes(context: StepContext, agentName: string, turnId: string | null): SpanAttributes {
  return {
    "gen_ai.conversation.id": context.flowId,
    "session.id": context.flowId,
    "gen_ai.agent.name": agentName,
    [perdureAttributeKeys.flowId]: context.flowId,
    [perdureAttributeKeys.runId]: context.flowId,
    [perdureAttributeKeys.stepType]: context.stepType,
    [perdureAttributeKeys.stepExecutionId]: context.executionId,
    [perdureAttributeKeys.stepAttempt]: context.attempt,
    ...(turnId === null ? {} : { [perdureAttributeKeys.turnId]: turnId }),
  };
}

/** The model attributes of a `chat` span; `"1.36.0"` names the provider `gen_ai.system`. */
export function modelCallAttributes(metadata: ModelCallMetadata | undefined, version: GenAISemanticConventionsVersion): SpanAttributes {
  if (metadata === undefined || metadata === null) return {};
  const attributes: SpanAttributes = {};
  if (typeof metadata.requestModel === "string" && metadata.requestModel !== "") attributes["gen_ai.request.model"] = metadata.requestModel;
  if (typeof metadata.responseModel === "string" && metadata.responseModel !== "") attributes["gen_ai.response.model"] = metadata.responseModel;
  if (typeof metadata.providerName === "string" && metadata.providerName !== "") {
    attributes[version === "1.36.0" ? "gen_ai.system" : "gen_ai.provider.name"] = metadata.providerName;
  }
  if (typeof metadata.responseId === "string" && metadata.responseId !== "") attributes["gen_ai.response.id"] = metadata.responseId;
  if (Array.isArray(metadata.finishReasons) && metadata.finishReasons.length > 0) {
    attributes["gen_ai.response.finish_reasons"] = metadata.finishReasons.map(String);
  }
  return attributes;
}

/** True when the runner reported exactly one model call: only then is the `chat` span a client call with usage. */
export function isSingleModelCall(usage: AgentUsage | undefined): boolean {
  return usage?.requests === 1;
}

/** Usage attributes of a single model call with a non-zero input or output count; `"1.36.0"` has no cache or reasoning counts. */
export function usageAttributes(usage: AgentUsage | undefined, version: GenAISemanticConventionsVersion): SpanAttributes {
  if (usage === undefined || !isSingleModelCall(usage) || (usage.inputTokens <= 0 && usage.outputTokens <= 0)) return {};
  const attributes: SpanAttributes = {
    "gen_ai.usage.input_tokens": usage.inputTokens,
    "gen_ai.usage.output_tokens": usage.outputTokens,
  };
  if (version === "1.36.0") return attributes;
  if (usage.cachedInputTokens > 0) attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cachedInputTokens;
  if (usage.reasoningTokens > 0) attributes["gen_ai.usage.reasoning.output_tokens"] = usage.reasoningTokens;
  return attributes;
}

/** `error.type` of a failed attempt: the error's `name`, such as `ToolExecutionError`. */
export function errorTypeOf(error: unknown): string {
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === "string" && name !== "" ? name : "Error";
}

/** The status message of a failed attempt. */
export function errorMessageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : "a non-Error value was thrown";
}
