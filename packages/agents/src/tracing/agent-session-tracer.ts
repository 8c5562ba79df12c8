/**
 * One session Flow type's tracer: resolves the `tracing` options to an
 * OpenTelemetry tracer on first use, loading `@opentelemetry/api` only when
 * tracing is enabled, and turns stored `traceparent` text into parent contexts.
 */
import type { Context, Tracer } from "@opentelemetry/api";
import { genAISemanticConventionsSchemaUrls, type ResolvedAgentTracingOptions } from "./agent-tracing-options.ts";
import { loadedOpenTelemetryApi, loadOpenTelemetryApi, type OpenTelemetryApiModule } from "./load-opentelemetry-api.ts";
import { parseTraceParent } from "./traceparent.ts";
import { guardTracing } from "./tracing-failure-log.ts";

/** The instrumentation scope of the session's spans. */
export const agentTracingScopeName = "@perdure/agents";

/** A loaded API and tracer, with the options that shape the spans. */
export interface ActiveAgentTracer {
  api: OpenTelemetryApiModule;
  tracer: Tracer;
  options: ResolvedAgentTracingOptions;
  /** The context of a stored `traceparent`, or the root context when there is none (the span starts a trace of its own). */
  parentContext(traceParent: string | undefined | null): Context;
}

/** Emits a session Flow type's spans; `active()` is undefined when tracing is off or the API is missing. */
export class AgentSessionTracer {
  readonly options: ResolvedAgentTracingOptions;
  private tracerByProvider = new WeakMap<object, Tracer>();

  constructor(options: ResolvedAgentTracingOptions) {
    this.options = options;
  }

  /** The tracer to emit with, or undefined: disabled (the API is never loaded), not installed, or failing. */
  async active(): Promise<ActiveAgentTracer | undefined> {
    if (!this.options.isEnabled) return undefined;
    const api = loadedOpenTelemetryApi() ?? (await loadOpenTelemetryApi());
    if (api === undefined) return undefined;
    return guardTracing("getting the tracer", () => this.activeWith(api), undefined);
  }

  private activeWith(api: OpenTelemetryApiModule): ActiveAgentTracer {
    // The global provider is looked up each time, so an SDK registered after the Flow was built still gets spans.
    const provider = (this.options.tracerProvider ?? api.trace.getTracerProvider()) as { getTracer: (name: string, version?: string, options?: { schemaUrl?: string }) => Tracer };
    let tracer = this.tracerByProvider.get(provider);
    if (tracer === undefined) {
      tracer = provider.getTracer(agentTracingScopeName, undefined, { schemaUrl: genAISemanticConventionsSchemaUrls[this.options.semanticConventionsVersion] });
      this.tracerByProvider.set(provider, tracer);
    }
    return {
      api,
      tracer,
      options: this.options,
      parentContext: (traceParent) => {
        const parent = parseTraceParent(traceParent);
        return parent === undefined ? api.ROOT_CONTEXT : api.trace.setSpanContext(api.ROOT_CONTEXT, { ...parent, isRemote: true });
      },
    };
  }
}

/**
 * Runs `call` inside `context` (so it is the active one); if the context
 * manager itself throws before `call` started, runs `call` plainly instead.
 * Never runs `call` twice.
 */
export function runInContext<TResult>(active: ActiveAgentTracer, context: Context | undefined, call: () => Promise<TResult>): Promise<TResult> {
  if (context === undefined) return call();
  let started = false;
  const startCall = (): Promise<TResult> => {
    started = true;
    return call();
  };
  try {
    return active.api.context.with(context, startCall);
  } catch (error) {
    if (started) throw error;
    guardTracing("activating the span context", () => {
      throw error;
    }, undefined);
    return call();
  }
}
