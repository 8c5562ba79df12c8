/** Types `RunModel`'s deferral and the built-in tools' routing share. */
import type { ExecuteContext, Movement } from "@perdure/engine";
import type { AgentEventWriter } from "../../contract/values/agent-event.ts";
import type { AgentInterrupt } from "../../contract/values/agent-interrupt.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";
import type { SessionEnvironment } from "../session-environment.ts";

/** What deferring one call adds to the commit. */
export interface DeferredCallWork {
  /** The Step that continues the call, or none when it is final in this commit. */
  movement?: Movement;
  interrupt?: AgentInterrupt;
}

/** What every call's handling shares within one commit. */
export interface DeferralContext {
  context: ExecuteContext;
  environment: SessionEnvironment;
  state: AgentState;
  events: AgentEventWriter;
  /** The interrupt deadline of this commit, or null. */
  deadline: string | null;
  now: string;
  /** How many `write_todos` calls the response made. */
  writeTodosCount: number;
}

