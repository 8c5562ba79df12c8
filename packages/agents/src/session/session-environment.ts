import type { AgentFrameworkRunner, DeferredToolOutcome } from "../contract/agent-framework-runner.ts";
import type { AgentSessionTracer } from "../tracing/agent-session-tracer.ts";
import type { AgentSessionPersistence } from "./persistence.ts";
import type { ResolvedAgentSessionOptions } from "./session-options.ts";

/** What every Step and RPC of one session Flow type shares. */
export interface SessionEnvironment {
  runner: AgentFrameworkRunner<DeferredToolOutcome>;
  persistence: AgentSessionPersistence;
  options: ResolvedAgentSessionOptions;
  /** Emits the session's OpenTelemetry spans (a no-op when tracing is off). */
  tracer: AgentSessionTracer;
}
