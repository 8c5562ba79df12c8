/**
 * The values of steering and turn cancellation: what `steer_user_message`
 * and `cancel_turn` record, and how a waiting tool call is told to stop.
 */
import { asWireObject, readString, type WireObject } from "./wire.ts";

/** Why a call that had not started was stopped. */
export type ToolCallCancellationReason = "steered" | "turn_cancelled";

/** `TurnControlRequests` message: wakes the turn's waiting Step after a steer. */
export interface TurnControlRequest {
  kind: "steer";
}

export function turnControlRequestToWire(value: TurnControlRequest): WireObject {
  return { kind: value.kind };
}

export function turnControlRequestFromWire(data: unknown): TurnControlRequest {
  asWireObject(data, "TurnControlRequest");
  return { kind: "steer" };
}

/** `TurnCancellationRequest`: the turn `cancel_turn` stopped; written only by that RPC. */
export interface TurnCancellationRequest {
  turnId: string;
  requestedAt: string;
}

export function turnCancellationRequestToWire(value: TurnCancellationRequest): WireObject {
  return { turn_id: value.turnId, requested_at: value.requestedAt };
}

export function turnCancellationRequestFromWire(data: unknown): TurnCancellationRequest {
  const object = asWireObject(data, "TurnCancellationRequest");
  return { turnId: readString(object, "turn_id", ""), requestedAt: readString(object, "requested_at", "") };
}

/** `ToolCallCancellations[<toolCallId>]` message: the call's wait ends without a result of its own. */
export interface ToolCallCancellation {
  reason: ToolCallCancellationReason;
}

export function isToolCallCancellationReason(value: unknown): value is ToolCallCancellationReason {
  return value === "steered" || value === "turn_cancelled";
}

export function toolCallCancellationToWire(value: ToolCallCancellation): WireObject {
  return { reason: value.reason };
}

export function toolCallCancellationFromWire(data: unknown): ToolCallCancellation {
  const reason = readString(asWireObject(data, "ToolCallCancellation"), "reason", "turn_cancelled");
  return { reason: isToolCallCancellationReason(reason) ? reason : "turn_cancelled" };
}
