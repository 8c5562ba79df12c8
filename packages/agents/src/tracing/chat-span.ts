/**
 * The `chat` span of one model call attempt (`RunModel`, `CompactContext`):
 * emitted when the attempt's call ends, from its start time, under the
 * activation's root; while the call runs, the root's context is active.
 */
import type { Attributes, Context } from "@opentelemetry/api";
import type { StepContext } from "@perdure/engine";
import type { AgentTurnContext, AgentTurnOutcome, DeferredToolCall, ModelCallMetadata } from "../contract/agent-framework-runner.ts";
import type { TracingEnvironment } from "./tracing-environment.ts";
import { messageSequenceKey, type FrameworkMessage } from "../contract/values/agent-message.ts";
import type { AgentUsage } from "../contract/values/agent-usage.ts";
import { runInContext, type ActiveAgentTracer } from "./agent-session-tracer.ts";
import { assistantTextsOf, inputMessagesContent, outputMessagesContent } from "./message-content.ts";
import { commonSpanAttributes, errorMessageOf, errorTypeOf, isSingleModelCall, modelCallAttributes, perdureAttributeKeys, usageAttributes, type SpanAttributes } from "./span-attributes.ts";
import { guardTracing } from "./tracing-failure-log.ts";
import { agentMetrics } from "../metrics/agent-metrics.ts";

/** What a model call attempt was given. */
export interface ModelCallSpanInput {
  turnId: string | null;
  /** The messages the call was given, oldest first, each with its stored sequence. */
  messages: readonly (FrameworkMessage & { sequence: number })[];
}

/** What a finished model call reports for its span. */
export interface ModelCallSpanResult {
  modelCallMetadata?: ModelCallMetadata | undefined;
  usage?: AgentUsage | undefined;
  /** The messages the call produced, in the order they will be stored after `input.messages`. */
  outputMessages?: readonly FrameworkMessage[] | undefined;
  requestedToolCalls?: readonly DeferredToolCall[] | undefined;
  /** Text the call produced that is not stored as a message, such as a context summary (content capture only). */
  outputText?: string | undefined;
}

function resultAttributes(active: ActiveAgentTracer, input: ModelCallSpanInput, result: ModelCallSpanResult): SpanAttributes {
  const version = active.options.semanticConventionsVersion;
  const attributes: SpanAttributes = { ...modelCallAttributes(result.modelCallMetadata, version), ...usageAttributes(result.usage, version) };
  const lastSequence = input.messages.at(-1)?.sequence ?? 0;
  const outputs = result.outputMessages ?? [];
  if (outputs.length > 0) attributes[perdureAttributeKeys.outputMessagesKeys] = outputs.map((_, index) => messageSequenceKey(lastSequence + index + 1));
  const requested = result.requestedToolCalls ?? [];
  if (requested.length > 0) attributes[perdureAttributeKeys.requestedToolCallIds] = requested.map((call) => call.toolCallId);
  if (active.options.shouldCaptureMessageContent && version !== "1.36.0") {
    const texts = typeof result.outputText === "string" ? [...assistantTextsOf(outputs), result.outputText] : assistantTextsOf(outputs);
    attributes["gen_ai.output.messages"] = outputMessagesContent(texts, requested, result.modelCallMetadata?.finishReasons?.[0]);
  }
  return attributes;
}

function inputAttributes(active: ActiveAgentTracer, context: StepContext, input: ModelCallSpanInput): SpanAttributes {
  const last = input.messages.at(-1);
  return {
    "gen_ai.operation.name": "chat",
    ...commonSpanAttributes(context, active.options.agentName, input.turnId),
    ...(last === undefined ? {} : { [perdureAttributeKeys.inputMessagesLastKey]: messageSequenceKey(last.sequence) }),
    ...(active.options.shouldCaptureMessageContent && active.options.semanticConventionsVersion !== "1.36.0" ? { "gen_ai.input.messages": inputMessagesContent(input.messages) } : {}),
  };
}

interface ChatSpanEnd {
  parentContext: Context;
  startTime: Date;
  attributes: SpanAttributes;
  result?: ModelCallSpanResult;
  error?: unknown;
}

function emitChatSpan(active: ActiveAgentTracer, end: ChatSpanEnd): void {
  const { api, tracer } = active;
  const requestModel = end.result?.modelCallMetadata?.requestModel;
  const name = typeof requestModel === "string" && requestModel !== "" ? `chat ${requestModel}` : "chat";
  const span = tracer.startSpan(name, {
    kind: isSingleModelCall(end.result?.usage) ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL,
    startTime: end.startTime,
    attributes: end.attributes as Attributes,
  }, end.parentContext);
  if (end.error !== undefined) {
    span.setAttribute("error.type", errorTypeOf(end.error));
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: errorMessageOf(end.error) });
  }
  // Both ends on the wall clock, so the duration is the call's even though the span is created after it.
  span.end(new Date());
}

/**
 * Runs one model call attempt, records its GenAI client metrics (see
 * `metrics/agent-metrics.ts`) and emits its `chat` span when it ends (also
 * when it throws, with status `ERROR`). The parent is the activation root in
 * `AgentTraceContext`. Tracing errors are logged, never thrown; `call` runs
 * exactly once. `CompactContext` uses it for its summary call, with a
 * `describe` that returns the summary's metadata and usage.
 *
 * @example
 * const summary = await traceModelCall(context, environment, { turnId, messages }, () => runner.summarizeContext(request),
 *   (result) => ({ modelCallMetadata: result.modelCallMetadata, usage: result.usage }));
 */
export async function traceModelCall<TResult>(
  context: StepContext,
  environment: TracingEnvironment,
  input: ModelCallSpanInput,
  call: () => Promise<TResult>,
  describe: (result: TResult) => ModelCallSpanResult,
): Promise<TResult> {
  const measured = measureModelCall(call, describe);
  const active = await environment.tracer.active();
  if (active === undefined) return measured();
  const startTime = new Date();
  const prepared = guardTracing("preparing the chat span", () => ({
    parentContext: active.parentContext(context.read(environment.persistence.agentTraceContext)),
    attributes: inputAttributes(active, context, input),
  }), undefined);
  if (prepared === undefined) return measured();
  let result: TResult;
  try {
    result = await runInContext(active, prepared.parentContext, measured);
  } catch (error) {
    guardTracing("the chat span", () => emitChatSpan(active, { ...prepared, startTime, error }), undefined);
    throw error;
  }
  guardTracing("the chat span", () => {
    const described = describe(result);
    emitChatSpan(active, { ...prepared, startTime, result: described, attributes: { ...prepared.attributes, ...resultAttributes(active, input, described) } });
  }, undefined);
  return result;
}

/** `call`, recording its GenAI client metrics (operation duration, token usage) when it ends. */
function measureModelCall<TResult>(call: () => Promise<TResult>, describe: (result: TResult) => ModelCallSpanResult): () => Promise<TResult> {
  return async () => {
    const startedAt = performance.now();
    let result: TResult;
    try {
      result = await call();
    } catch (error) {
      agentMetrics.modelCallEnded({ operationName: "chat", durationSeconds: (performance.now() - startedAt) / 1000, errorType: errorTypeOf(error) });
      throw error;
    }
    const durationSeconds = (performance.now() - startedAt) / 1000;
    guardTracing("the model call metrics", () => {
      const described = describe(result);
      agentMetrics.modelCallEnded({ operationName: "chat", durationSeconds, metadata: described.modelCallMetadata, usage: described.usage });
    }, undefined);
    return result;
  };
}

/**
 * `RunModel`'s hook: runs `runModelStep` and emits the attempt's `chat` span.
 *
 * @example
 * const outcome = await withChatSpan(context, environment, turn, () => runner.runModelStep(turn));
 */
export function withChatSpan(context: StepContext, environment: TracingEnvironment, turn: AgentTurnContext, call: () => Promise<AgentTurnOutcome>): Promise<AgentTurnOutcome> {
  return traceModelCall(context, environment, { turnId: turn.turnId, messages: turn.messages }, call, (outcome) => ({
    modelCallMetadata: outcome?.modelCallMetadata,
    usage: outcome?.usage,
    outputMessages: Array.isArray(outcome?.newMessages) ? outcome.newMessages : [],
    requestedToolCalls: outcome?.kind === "tool_calls_requested" && Array.isArray(outcome.toolCalls) ? outcome.toolCalls : [],
  }));
}
