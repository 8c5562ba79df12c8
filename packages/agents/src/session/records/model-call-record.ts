/**
 * `ModelCalls`: each model call a runner reported (`outcome.modelCall`),
 * kept in the commit of its `RunModel`, keyed by turn and Step execution so
 * the keys sort in call order. A request too large to keep whole keeps
 * everything but its input (see `modelCallRecordMaxBytes`).
 */
import { asWireObject, readBoolean, readNumber, readString, type WireObject } from "../../contract/values/wire.ts";
import { turnRecordKey } from "./turn-key.ts";

/** The largest record kept whole, in bytes of JSON; above it the request's `input` is left out and `inputOmitted` set. */
export const modelCallRecordMaxBytes = 256 * 1024;

export interface ModelCallRecord {
  turnId: string;
  /** The `RunModel` execution that made the call. */
  executionId: string;
  attempt: number;
  request: unknown;
  response: unknown;
  /** What the runner made of the response: `turn_completed` or `tool_calls_requested`. */
  outcome: string;
  /** True when the request's `input` was too large to keep. */
  inputOmitted: boolean;
}

export function modelCallRecordToWire(record: ModelCallRecord): WireObject {
  return {
    turn_id: record.turnId,
    execution_id: record.executionId,
    attempt: record.attempt,
    request: record.request,
    response: record.response,
    outcome: record.outcome,
    input_omitted: record.inputOmitted,
  };
}

export function modelCallRecordFromWire(data: unknown): ModelCallRecord {
  const object = asWireObject(data, "ModelCallRecord");
  return {
    turnId: readString(object, "turn_id", ""),
    executionId: readString(object, "execution_id", ""),
    attempt: readNumber(object, "attempt", 1),
    request: object.request ?? null,
    response: object.response ?? null,
    outcome: readString(object, "outcome", ""),
    inputOmitted: readBoolean(object, "input_omitted", false),
  };
}

/** The key of a turn's model call: the turn's number, then the Step execution's, both padded. */
export function modelCallKey(turnNumber: number, executionId: string): string {
  return `${turnRecordKey(turnNumber)}-${executionId.padStart(12, "0")}`;
}
