/**
 * The writes of the session's records in a Step's commit: the checkpoint a
 * turn start leaves, the tool calls a turn end keeps, and a model call.
 */
import type { StepContext } from "@perdure/engine";
import type { RecordedModelCall } from "../../contract/agent-framework-runner.ts";
import type { AgentState, InteractionMode } from "../../contract/values/agent-state.ts";
import { emptyAgentUsage } from "../../contract/values/agent-usage.ts";
import type { AgentToolCallRecord } from "../../contract/values/agent-tool-call.ts";
import type { AgentSessionPersistence } from "../persistence.ts";
import { modelCallKey, modelCallRecordMaxBytes, modelCallRecordToWire, type ModelCallRecord } from "./model-call-record.ts";
import { turnNumberOfId, turnRecordKey } from "./turn-key.ts";

/** Writes the checkpoint of the turn that `state` (the state before it) is about to start, in `interactionMode`, started by a message or a steer. */
export function writeTurnCheckpoint(
  context: StepContext, persistence: AgentSessionPersistence, state: AgentState, createdAt: string,
  start: { interactionMode: InteractionMode; startedBy: "message" | "steer" } = { interactionMode: "chat", startedBy: "message" },
): void {
  context.write(persistence.turnCheckpoints.instance(turnRecordKey(state.turnCount + 1)), {
    turnCount: state.turnCount,
    messageCount: state.messageCount,
    lastTurnError: state.lastTurnError,
    plan: context.read(persistence.agentPlan) ?? null,
    contextSummary: context.read(persistence.contextSummary) ?? null,
    sessionSettings: context.read(persistence.sessionSettings) ?? null,
    usage: context.read(persistence.agentUsage) ?? emptyAgentUsage(),
    createdAt,
    interactionMode: start.interactionMode,
    startedBy: start.startedBy,
  });
}

/** Keeps the given records (a turn's, as its end loaded them) under their turns. */
export function writeTurnToolCalls(context: StepContext, persistence: AgentSessionPersistence, records: readonly AgentToolCallRecord[]): void {
  const byTurn = new Map<string, AgentToolCallRecord[]>();
  for (const record of records) byTurn.set(record.turnId, [...(byTurn.get(record.turnId) ?? []), record]);
  for (const [turnId, toolCalls] of byTurn) {
    const turnNumber = turnNumberOfId(turnId);
    if (turnNumber === undefined) continue;
    const ordered = [...toolCalls].sort((left, right) => left.deferralOrder - right.deferralOrder);
    context.write(persistence.turnToolCalls.instance(turnRecordKey(turnNumber)), { turnId, toolCalls: ordered, inheritedFrom: null });
  }
}

/** Keeps a runner's record of the model call `RunModel` just made. */
export function writeModelCallRecord(
  context: StepContext,
  persistence: AgentSessionPersistence,
  turnId: string,
  outcome: string,
  call: RecordedModelCall,
): void {
  const turnNumber = turnNumberOfId(turnId);
  if (turnNumber === undefined) return;
  let record: ModelCallRecord = { turnId, executionId: context.executionId, attempt: context.attempt, request: call.request ?? null, response: call.response ?? null, outcome, inputOmitted: false };
  if (Buffer.byteLength(JSON.stringify(modelCallRecordToWire(record)) ?? "") > modelCallRecordMaxBytes) {
    const request = typeof record.request === "object" && record.request !== null ? { ...(record.request as Record<string, unknown>), input: null } : null;
    record = { ...record, request, inputOmitted: true };
  }
  context.write(persistence.modelCalls.instance(modelCallKey(turnNumber, context.executionId)), record);
}
