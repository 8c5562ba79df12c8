/**
 * Reads one finished `streamText` step into the parts of a `ModelResponse`:
 * usage, tool calls, the stored assistant message and call metadata.
 */
import type { AssistantModelMessage, LanguageModelUsage, StepResult, ToolModelMessage, ToolSet, TypedToolCall } from "ai";
import type { ModelCallMetadata } from "../contract/agent-framework-runner.ts";
import type { ModelToolCall } from "../stepwise/model-client.ts";
import type { AgentUsage } from "../contract/values/agent-usage.ts";

/** The usage of one model call; a number the provider did not report counts as 0. */
export function toAgentUsage(usage: LanguageModelUsage): AgentUsage {
  return {
    inputTokens: usage.inputTokens ?? 0,
    outputTokens: usage.outputTokens ?? 0,
    totalTokens: usage.totalTokens ?? 0,
    reasoningTokens: usage.outputTokenDetails.reasoningTokens ?? 0,
    cachedInputTokens: usage.inputTokenDetails.cacheReadTokens ?? 0,
    requests: 1,
  };
}

/**
 * The tool calls the Stepwise runner runs, in the model's order, with their
 * arguments as JSON text. Provider-executed calls (a provider's own web
 * search, say) already carry their results in the assistant message, so they
 * are left out. An invalid call, such as one of an unknown tool or with
 * arguments that are not JSON, is kept: the runner reports it to the model
 * as a tool failure. Its arguments are the model's own text when the AI SDK
 * could not parse them.
 */
export function toModelToolCalls(toolCalls: readonly TypedToolCall<ToolSet>[]): ModelToolCall[] {
  return toolCalls
    .filter((call) => call.providerExecuted !== true)
    .map((call) => ({
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      arguments: call.invalid === true && typeof call.input === "string" ? call.input : JSON.stringify(call.input ?? {}),
    }));
}

/**
 * The step's assistant message as JSON text, which is what the session
 * stores and hands back: every part with its `providerOptions` as the AI SDK
 * returned them (properties whose value is `undefined` drop out, as in any
 * JSON). A response without content is an assistant message with no parts.
 */
export function storedAssistantItem(responseMessages: readonly (AssistantModelMessage | ToolModelMessage)[]): string {
  const message = responseMessages.find((candidate) => candidate.role === "assistant") ?? { role: "assistant", content: [] };
  return JSON.stringify(message);
}

/** OpenTelemetry's well-known `gen_ai.provider.name` values by AI SDK provider ID prefix; the most specific prefix comes first. */
const genAIProviderNames: readonly (readonly [string, string])[] = [
  ["google.vertex", "gcp.vertex_ai"],
  ["google", "gcp.gemini"],
  ["azure", "azure.ai.openai"],
  ["amazon-bedrock", "aws.bedrock"],
  ["mistral", "mistral_ai"],
  ["xai", "x_ai"],
];

/**
 * The provider as the GenAI conventions name it: the AI SDK's provider ID
 * (`openai.responses`, `anthropic.messages`) without its API suffix, with
 * OpenTelemetry's well-known names where they differ.
 */
export function genAIProviderName(aiSdkProviderId: string): string {
  const known = genAIProviderNames.find(([prefix]) => aiSdkProviderId === prefix || aiSdkProviderId.startsWith(`${prefix}.`) || aiSdkProviderId.startsWith(`${prefix}-`));
  return known?.[1] ?? aiSdkProviderId.split(".")[0] ?? aiSdkProviderId;
}

/** What the AI SDK reports about the call, for tracing. */
export function modelCallMetadataOf(step: StepResult<ToolSet>, requestModel: string): ModelCallMetadata {
  return {
    requestModel,
    responseModel: step.response.modelId,
    providerName: genAIProviderName(step.model.provider),
    responseId: step.response.id,
    finishReasons: [step.finishReason],
  };
}
