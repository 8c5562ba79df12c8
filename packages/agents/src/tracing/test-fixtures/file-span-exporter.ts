/**
 * A span exporter for Worker child processes: appends each finished span as
 * one JSON line to a file, synchronously, so the spans of a process that is
 * SIGKILLed later are already on disk.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";

/** A span as the file holds it. */
export interface FileSpanRecord {
  processId: number;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
}

export class FileSpanExporter implements SpanExporter {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  export(spans: ReadableSpan[], resultCallback: (result: { code: number }) => void): void {
    const lines = spans.map((span) => JSON.stringify({
      processId: process.pid,
      name: span.name,
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
      parentSpanId: span.parentSpanContext?.spanId ?? null,
      attributes: span.attributes,
      links: span.links.map((link) => ({ traceId: link.context.traceId, spanId: link.context.spanId })),
    } satisfies FileSpanRecord));
    appendFileSync(this.path, lines.map((line) => `${line}\n`).join(""));
    resultCallback({ code: 0 });
  }

  async shutdown(): Promise<void> {}

  async forceFlush(): Promise<void> {}
}

/** Every span the file holds, in the order they ended. */
export function readFileSpans(path: string): FileSpanRecord[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as FileSpanRecord);
}
