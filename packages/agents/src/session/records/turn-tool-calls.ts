/**
 * `TurnToolCalls`: every tool call of an ended turn with its effect class,
 * arguments, status and output, written in the commit that ends the turn
 * (the live `AgentToolCalls` records are deleted then). Exports read them;
 * a fork copies them marked with the session they were inherited from, so
 * nobody mistakes a write the source made for one the fork made.
 */
import { agentToolCallFromWire, agentToolCallToWire, type AgentToolCallRecord } from "../../contract/values/agent-tool-call.ts";
import { asWireObject, readNullableString, readString, type WireObject } from "../../contract/values/wire.ts";

export interface TurnToolCalls {
  turnId: string;
  /** The turn's calls in `deferralOrder`. */
  toolCalls: AgentToolCallRecord[];
  /** Set on a fork's copy: the session whose turn made these calls (and whose effects they were). */
  inheritedFrom: string | null;
}

export function turnToolCallsToWire(value: TurnToolCalls): WireObject {
  return { turn_id: value.turnId, tool_calls: value.toolCalls.map(agentToolCallToWire), inherited_from: value.inheritedFrom };
}

export function turnToolCallsFromWire(data: unknown): TurnToolCalls {
  const object = asWireObject(data, "TurnToolCalls");
  return {
    turnId: readString(object, "turn_id", ""),
    toolCalls: Array.isArray(object.tool_calls) ? object.tool_calls.map(agentToolCallFromWire) : [],
    inheritedFrom: readNullableString(object, "inherited_from"),
  };
}
