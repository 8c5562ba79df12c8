import type { AttributeRef } from "@perdure/engine";
import type { AgentSessionTracer } from "./agent-session-tracer.ts";

/**
 * What the spans of a session Step need from the session: its tracer and the
 * Attribute that carries the activation's trace context. The session's own
 * environment is one; tracing needs no more of the session than this.
 */
export interface TracingEnvironment {
  readonly tracer: AgentSessionTracer;
  readonly persistence: { readonly agentTraceContext: AttributeRef<string> };
}
