import { type Client, describeValue, InvalidInputError } from "@perdure/engine";
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";

/**
 * The session a UI stream helper works on. The caller must have checked that
 * the browser may read (or write to) this session: every helper trusts
 * `flowId`.
 */
export interface AgentUIStreamSessionOptions {
  /** A Client of the store the session runs on. */
  client: Client;
  /** The session Flow, as `createAgentSessionFlow` or `createStepwiseAgentSessionFlow` returned it. */
  flow: AgentSessionFlow;
  /** The session (Flow instance) ID; with `useChat`, the chat ID. */
  flowId: string;
}

/** The session options, checked. */
export interface AgentUIStreamSession {
  client: Client;
  flow: AgentSessionFlow;
  flowId: string;
}

/** Checks the session options every helper takes. */
export function resolveAgentUIStreamSession(options: AgentUIStreamSessionOptions): AgentUIStreamSession {
  if (typeof options?.client?.readStream !== "function") {
    throw new InvalidInputError("the UI stream options have no client: pass the engine Client of the session's store");
  }
  if (typeof options.flow?.agentEvents?.name !== "string" || options.flow.getAgentSnapshot === undefined) {
    throw new InvalidInputError("the UI stream options' flow is not an agent session Flow: pass what createAgentSessionFlow returned");
  }
  if (typeof options.flowId !== "string" || options.flowId === "") {
    throw new InvalidInputError(`the UI stream options' flowId ${describeValue(options.flowId)} is invalid: pass the session ID`);
  }
  return { client: options.client, flow: options.flow, flowId: options.flowId };
}

/** Resolves after `milliseconds`, or at once when `signal` aborts. */
export function delay(milliseconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const finish = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", finish);
      resolve();
    };
    const timer = setTimeout(finish, milliseconds);
    signal?.addEventListener("abort", finish, { once: true });
  });
}

/** The number `n` of a `turn-<n>` ID, or null for another form. */
export function turnNumber(turnId: string): number | null {
  const match = /^turn-(\d+)$/.exec(turnId);
  return match?.[1] === undefined ? null : Number(match[1]);
}
