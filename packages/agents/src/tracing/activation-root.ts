/**
 * The root of an activation's trace: a near-zero `invoke_agent {agent}` span
 * emitted by the Step that starts the activation, linked to the previous
 * activation's root, whose `traceparent` commits with the Step in
 * `AgentTraceContext`.
 */
import type { Link } from "@opentelemetry/api";
import type { StepContext } from "@perdure/engine";
import type { TracingEnvironment } from "./tracing-environment.ts";
import { messageSequenceKey } from "../contract/values/agent-message.ts";
import { withoutFields } from "../contract/values/wire.ts";
import { commonSpanAttributes, perdureAttributeKeys } from "./span-attributes.ts";
import { formatTraceParent, parseTraceParent } from "./traceparent.ts";
import { guardTracing } from "./tracing-failure-log.ts";

/** What the activation's Step knows when it starts the activation. */
export interface ActivationRootInput {
  /** The turn the activation runs, or null. */
  turnId: string | null;
  /** The sequence of the last stored message (the user message that started it), when known. */
  lastMessageSequence?: number;
}

/**
 * Emits the activation's root span and stages its `traceparent` in
 * `AgentTraceContext`; a root without a valid span context (tracing
 * disabled, no API or no SDK) deletes the stored value instead. Returns the
 * stored `traceparent`, for tool call records that the activation continues.
 * Never throws.
 *
 * @example
 * state = await startTurn(context, persistence, state, message, writeEvent);
 * await emitActivationRoot(context, environment, { turnId: state.activeTurnId, lastMessageSequence: state.messageCount });
 */
export async function emitActivationRoot(context: StepContext, environment: TracingEnvironment, input: ActivationRootInput): Promise<string | undefined> {
  const { agentTraceContext } = environment.persistence;
  const previous = context.read(agentTraceContext);
  const active = await environment.tracer.active();
  const traceParent = active === undefined ? undefined : guardTracing("the invoke_agent span", () => {
    const { api, tracer, options } = active;
    const previousParent = parseTraceParent(previous);
    const links: Link[] = previousParent === undefined ? [] : [{ context: { ...previousParent, isRemote: true } }];
    const span = tracer.startSpan(`invoke_agent ${options.agentName}`, {
      kind: api.SpanKind.INTERNAL,
      links,
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        ...commonSpanAttributes(context, options.agentName, input.turnId),
        ...(input.lastMessageSequence === undefined || input.lastMessageSequence < 1 ? {} : { [perdureAttributeKeys.inputMessagesLastKey]: messageSequenceKey(input.lastMessageSequence) }),
      },
    }, api.ROOT_CONTEXT);
    const spanContext = span.spanContext();
    span.end();
    return api.trace.isSpanContextValid(spanContext) ? formatTraceParent(spanContext) : undefined;
  }, undefined);
  if (traceParent !== undefined) context.write(agentTraceContext, traceParent);
  else if (previous !== undefined) context.write(agentTraceContext, null);
  return traceParent;
}

/** The activation's `traceparent` to copy onto a tool call record that `RunModel` creates: `{}` when none is stored. */
export function activationTraceContextField(context: StepContext, environment: TracingEnvironment): { traceContext?: string } {
  const traceContext = context.read(environment.persistence.agentTraceContext);
  return traceContext === undefined ? {} : { traceContext };
}

/** The record with its trace context replaced by the given activation's (or removed when there is none). */
export function withTraceContext<TRecord extends { traceContext?: string }>(record: TRecord, traceContext: string | undefined): TRecord {
  const rest = withoutFields(record, ["traceContext"]);
  return (traceContext === undefined ? rest : { ...rest, traceContext }) as TRecord;
}
