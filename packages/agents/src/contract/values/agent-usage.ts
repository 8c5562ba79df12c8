import { asWireObject, readNumber, type WireObject } from "./wire.ts";

/** Token usage of model calls. */
export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  reasoningTokens: number;
  cachedInputTokens: number;
  /** Model calls counted. */
  requests: number;
}

/** Usage of nothing, to add parts to. */
export function emptyAgentUsage(): AgentUsage {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0, reasoningTokens: 0, cachedInputTokens: 0, requests: 0 };
}

/** Adds two usages field by field. */
export function addAgentUsage(left: AgentUsage, right: AgentUsage): AgentUsage {
  return {
    inputTokens: left.inputTokens + right.inputTokens,
    outputTokens: left.outputTokens + right.outputTokens,
    totalTokens: left.totalTokens + right.totalTokens,
    reasoningTokens: left.reasoningTokens + right.reasoningTokens,
    cachedInputTokens: left.cachedInputTokens + right.cachedInputTokens,
    requests: left.requests + right.requests,
  };
}

export function agentUsageToWire(usage: AgentUsage): WireObject {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    total_tokens: usage.totalTokens,
    reasoning_tokens: usage.reasoningTokens,
    cached_input_tokens: usage.cachedInputTokens,
    requests: usage.requests,
  };
}

export function agentUsageFromWire(data: unknown): AgentUsage {
  const object = asWireObject(data ?? {}, "AgentUsage");
  return {
    inputTokens: readNumber(object, "input_tokens", 0),
    outputTokens: readNumber(object, "output_tokens", 0),
    totalTokens: readNumber(object, "total_tokens", 0),
    reasoningTokens: readNumber(object, "reasoning_tokens", 0),
    cachedInputTokens: readNumber(object, "cached_input_tokens", 0),
    requests: readNumber(object, "requests", 0),
  };
}
