/**
 * The link of a child session to the parent session whose tool call started
 * it (`agentTool`), and the Clients sub-agent sessions use to reach their
 * parents. A Worker has no Client of its own, so `agentTool` registers the
 * one it is given for the child's Flow type.
 */
import type { Client } from "@perdure/engine";
import { asWireObject, readNumber, readString, type WireObject } from "../../contract/values/wire.ts";

export interface ParentSessionLink {
  /** The parent session's ID. */
  sessionId: string;
  /** The parent's tool call that waits for this session's turn. */
  toolCallId: string;
  /** 1 for a child of a top-level session, 2 for its child, and so on. */
  depth: number;
}

export function parentSessionLinkToWire(link: ParentSessionLink): WireObject {
  return { session_id: link.sessionId, tool_call_id: link.toolCallId, depth: link.depth };
}

export function parentSessionLinkFromWire(data: unknown): ParentSessionLink {
  const object = asWireObject(data, "ParentSessionLink");
  return { sessionId: readString(object, "session_id", ""), toolCallId: readString(object, "tool_call_id", ""), depth: readNumber(object, "depth", 1) };
}

const clientsByFlowType = new Map<string, Client>();

/** Registers the Client the sessions of `flowType` use to wake their parent. */
export function registerSubAgentClient(flowType: string, client: Client): void {
  clientsByFlowType.set(flowType, client);
}

/** The Client registered for `flowType`, or undefined. */
export function subAgentClient(flowType: string): Client | undefined {
  return clientsByFlowType.get(flowType);
}
