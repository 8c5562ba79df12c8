/**
 * W3C `traceparent` text, the form a span context takes in the
 * `AgentTraceContext` Attribute and on tool call records.
 */

/** The parts of a span context that a `traceparent` carries. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

const traceParentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const invalidTraceId = "0".repeat(32);
const invalidSpanId = "0".repeat(16);

/** `00-<trace ID>-<span ID>-<flags>`. */
export function formatTraceParent(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${(parent.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The span context of a stored `traceparent`, or undefined for anything else (a missing, foreign or all-zero value). */
export function parseTraceParent(text: string | undefined | null): TraceParent | undefined {
  if (typeof text !== "string") return undefined;
  const match = traceParentPattern.exec(text);
  if (match === null) return undefined;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  if (traceId === invalidTraceId || spanId === invalidSpanId) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}
