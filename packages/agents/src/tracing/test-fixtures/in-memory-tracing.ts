/**
 * OpenTelemetry SDK setup for tracing tests: a `BasicTracerProvider` that
 * exports to memory, an AsyncLocalStorage context manager so active spans
 * follow async calls, and readers for the span tree.
 */
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from "@opentelemetry/sdk-trace-base";

let contextManagerEnabled = false;

/** Registers the AsyncLocalStorage context manager once per process. */
export function enableAsyncContext(): void {
  if (contextManagerEnabled) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  contextManagerEnabled = true;
}

export interface InMemoryTracing {
  provider: BasicTracerProvider;
  exporter: InMemorySpanExporter;
  spans(): ReadableSpan[];
  spansNamed(name: string): ReadableSpan[];
  shutdown(): Promise<void>;
}

/** A provider whose finished spans are kept in memory; extra processors run first. */
export function startInMemoryTracing(extraProcessors: SpanProcessor[] = []): InMemoryTracing {
  enableAsyncContext();
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [...extraProcessors, new SimpleSpanProcessor(exporter)] });
  return {
    provider,
    exporter,
    spans: () => exporter.getFinishedSpans(),
    spansNamed: (name) => exporter.getFinishedSpans().filter((span) => span.name === name),
    shutdown: () => provider.shutdown(),
  };
}

/** The span's parent span ID, or undefined for a root. */
export function parentSpanIdOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** `00-<trace>-<span>-<flags>` of a finished span. */
export function traceParentOf(span: ReadableSpan): string {
  const spanContext = span.spanContext();
  return `00-${spanContext.traceId}-${spanContext.spanId}-${spanContext.traceFlags.toString(16).padStart(2, "0")}`;
}
