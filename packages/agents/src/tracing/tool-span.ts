/**
 * The `execute_tool {tool}` span of one tool Step attempt (`CallTool`,
 * `CallSingleAttemptTool`, `PollToolTask`), parented from the call's record,
 * and active while the tool runs.
 */
import type { Attributes, Span } from "@opentelemetry/api";
import type { StepContext } from "@perdure/engine";
import type { TracingEnvironment } from "./tracing-environment.ts";
import type { AgentToolCall, AgentToolCallRecord } from "../contract/values/agent-tool-call.ts";
import { runInContext, type ActiveAgentTracer } from "./agent-session-tracer.ts";
import { commonSpanAttributes, errorMessageOf, errorTypeOf } from "./span-attributes.ts";
import { guardTracing } from "./tracing-failure-log.ts";

function capturesContent(active: ActiveAgentTracer): boolean {
  return active.options.shouldCaptureMessageContent && active.options.semanticConventionsVersion !== "1.36.0";
}

function startToolSpan(active: ActiveAgentTracer, context: StepContext, record: AgentToolCall | AgentToolCallRecord): { span: Span; spanContext: ReturnType<ActiveAgentTracer["parentContext"]> } {
  const { api, tracer, options } = active;
  const parentContext = active.parentContext(record.traceContext);
  const span = tracer.startSpan(`execute_tool ${record.toolName}`, {
    kind: api.SpanKind.INTERNAL,
    attributes: {
      "gen_ai.operation.name": "execute_tool",
      ...commonSpanAttributes(context, options.agentName, record.turnId),
      "gen_ai.tool.name": record.toolName,
      "gen_ai.tool.call.id": record.toolCallId,
      "gen_ai.tool.type": "function",
      ...(capturesContent(active) ? { "gen_ai.tool.call.arguments": record.arguments } : {}),
    } as Attributes,
  }, parentContext);
  return { span, spanContext: api.trace.setSpan(parentContext, span) };
}

/**
 * Runs one tool execution (or task poll) with its `execute_tool` span
 * active, and ends the span when it returns or throws (status `ERROR`,
 * `error.type` the error's name, `ToolExecutionError` for a tool's own
 * failure). Tracing errors are logged, never thrown; `call` runs exactly once.
 *
 * @example
 * result = await withToolSpan(context, environment, toolCall, () => runner.executeDeferredToolCall(execution));
 */
export async function withToolSpan<TResult>(
  context: StepContext,
  environment: TracingEnvironment,
  record: AgentToolCall | AgentToolCallRecord,
  call: () => Promise<TResult>,
): Promise<TResult> {
  const active = await environment.tracer.active();
  if (active === undefined) return call();
  const started = guardTracing("starting the execute_tool span", () => startToolSpan(active, context, record), undefined);
  if (started === undefined) return call();
  let result: TResult;
  try {
    result = await runInContext(active, started.spanContext, call);
  } catch (error) {
    guardTracing("the execute_tool span", () => {
      started.span.setAttribute("error.type", errorTypeOf(error));
      started.span.setStatus({ code: active.api.SpanStatusCode.ERROR, message: errorMessageOf(error) });
      started.span.end();
    }, undefined);
    throw error;
  }
  guardTracing("the execute_tool span", () => {
    const output = (result as { output?: unknown } | null)?.output;
    if (capturesContent(active) && typeof output === "string") started.span.setAttribute("gen_ai.tool.call.result", output);
    started.span.end();
  }, undefined);
  return result;
}
