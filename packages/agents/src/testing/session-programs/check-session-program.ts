/**
 * The oracle of session programs: from the program alone, what the session
 * must hold once it is at rest: every turn's messages in order, each tool
 * call's result and how often its tool really ran, the usage, the state and
 * the events. Where a kill or a store fault leaves the contract a choice (a
 * single-attempt call may end `outcome_unknown`), the oracle reads which
 * allowed outcome happened and demands everything that follows from it
 * exactly.
 */
import type { InvocationLogEntry } from "../invocation-log.ts";
import type { AgentEvent } from "../../contract/values/agent-event.ts";
import type { AgentMessage } from "../../contract/values/agent-message.ts";
import type { AgentSnapshot } from "../../contract/values/agent-snapshot.ts";
import { turnFailureNoteFooter, turnFailureNoteHeader } from "../../contract/values/result-texts.ts";
import { allowedOutcomes, allowedRuns, outcomeOfResult, plannedOutcome, programOutcomeStatus, type ProgramOutcomeKind, type ProgramRunMode } from "./program-outcomes.ts";
import { programModelErrorMessage, programModelText } from "./program-texts.ts";
import type { ProgramToolRun } from "./session-program-flow.ts";
import { programToolCalls, type ProgramToolCall, type ProgramTurn, type SessionProgram } from "./session-program.ts";

/** What a run left behind, read after the session came to rest. */
export interface SessionProgramObservation {
  snapshot: AgentSnapshot;
  /** Every `AgentEvents` message of the session, oldest first. */
  events: readonly AgentEvent[];
  /** The InvocationLog: one entry per real tool run, named by tool call ID. */
  toolRuns: readonly InvocationLogEntry[];
  /** The session's flow ID, which starts every idempotency key. */
  flowId: string;
}

/** What the oracle found. */
export interface SessionProgramVerdict {
  violations: string[];
  /** Calls whose allowed outcome was not the planned one (`outcome_unknown` after a kill, say). */
  degradedCalls: string[];
  /** Turns that failed although the program has them answer (only allowed under store faults). */
  degradedTurns: string[];
}

interface ResolvedCall {
  call: ProgramToolCall;
  outcome: ProgramOutcomeKind;
  output: string;
}

interface TurnCheck {
  violations: string[];
  resolved: ResolvedCall[];
  failedAt: number | undefined;
  answered: number;
}

function describeMessage(message: AgentMessage | undefined): string {
  return message === undefined ? "no message" : `${message.role} message ${message.sequence} ${JSON.stringify(message.text.slice(0, 160))}`;
}

function checkTurn(turn: ProgramTurn, messages: readonly AgentMessage[], mode: ProgramRunMode, verdict: SessionProgramVerdict): TurnCheck {
  const violations: string[] = [];
  const resolved: ResolvedCall[] = [];
  const where = (index: number): string => `${turn.turnId} message ${index + 1} of ${messages.length}`;
  const [user] = messages;
  if (user?.role !== "user" || user.text !== turn.userText) violations.push(`${where(0)}: expected the user message ${JSON.stringify(turn.userText)}, found ${describeMessage(user)}`);
  let index = 1;
  let previous: ResolvedCall[] = [];
  let failedAt: number | undefined;
  let answered = 0;
  for (const modelCall of turn.modelCalls) {
    // The previous response's results come first, whether the turn goes on or fails here.
    for (const call of previous.map((entry) => entry.call)) {
      const message = messages[index];
      if (message?.role !== "tool" || message.toolCallId !== call.toolCallId) {
        violations.push(`${where(index)}: expected the result of ${call.toolCallId} (${call.toolName}), found ${describeMessage(message)}`);
        return { violations, resolved, failedAt, answered };
      }
      const outcome = outcomeOfResult(call, message.text);
      const allowed = allowedOutcomes(call, mode);
      if (outcome === undefined || !allowed.has(outcome)) {
        violations.push(`${call.toolCallId} (${call.toolName}, ${call.effect}, ${call.behavior.kind}${call.approval === null ? "" : call.approval.approved ? ", approved" : ", rejected"}) ended ${outcome ?? "with an unknown result"} ${JSON.stringify(message.text.slice(0, 200))}; allowed: ${[...allowed].join(", ")}`);
      } else if (outcome !== plannedOutcome(call)) {
        verdict.degradedCalls.push(`${call.toolCallId} ${outcome}`);
      }
      const entry = resolved.find((candidate) => candidate.call === call);
      if (entry !== undefined) {
        entry.outcome = outcome ?? "other-route";
        entry.output = message.text;
      }
      index += 1;
    }
    const message = messages[index];
    if (message?.role === "assistant") {
      if (modelCall.alwaysFails) violations.push(`${turn.turnId} model call ${modelCall.modelCall} answered, but every attempt of it throws`);
      answered += 1;
      const seen = previous.map((entry) => ({ toolCallId: entry.call.toolCallId, status: programOutcomeStatus[entry.outcome] }));
      const expectedText = programModelText(turn.turnId, modelCall.modelCall, seen);
      if (message.text !== expectedText) violations.push(`${where(index)}: the model's text is ${JSON.stringify(message.text)}, expected ${JSON.stringify(expectedText)} (it must see every call of the previous response final)`);
      index += 1;
      if (modelCall.toolCalls.length === 0) break;
      previous = modelCall.toolCalls.map((call) => ({ call, outcome: "other-route", output: "" }));
      resolved.push(...previous);
      continue;
    }
    // The turn failed at this model call.
    failedAt = modelCall.modelCall;
    if (!modelCall.alwaysFails) {
      if (mode === "faulted") verdict.degradedTurns.push(`${turn.turnId} failed at model call ${modelCall.modelCall}`);
      else violations.push(`${where(index)}: ${turn.turnId} failed at model call ${modelCall.modelCall}, which the program has answer (found ${describeMessage(message)})`);
    }
    if (resolved.length > 0) {
      const lines = resolved.map((entry) => `- ${entry.call.toolName} (${entry.call.toolCallId}): ${programOutcomeStatus[entry.outcome]}: ${entry.output}`);
      const note = [turnFailureNoteHeader, ...lines, turnFailureNoteFooter].join("\n");
      if (message?.role !== "system" || message.text !== note) violations.push(`${where(index)}: expected the turn failure note ${JSON.stringify(note)}, found ${describeMessage(message)}`);
      index += 1;
    }
    break;
  }
  if (index < messages.length) violations.push(`${where(index)}: ${messages.length - index} messages more than expected, from ${describeMessage(messages[index])}`);
  return { violations, resolved, failedAt, answered };
}

function checkToolRuns(program: SessionProgram, observation: SessionProgramObservation, resolved: readonly ResolvedCall[], mode: ProgramRunMode): string[] {
  const violations: string[] = [];
  const byCall = new Map<string, InvocationLogEntry[]>();
  for (const entry of observation.toolRuns) byCall.set(entry.name, [...(byCall.get(entry.name) ?? []), entry]);
  const known = new Set(programToolCalls(program).map((call) => call.toolCallId));
  for (const name of byCall.keys()) if (!known.has(name)) violations.push(`a tool ran for ${name}, which the program never called`);
  const resolvedById = new Map(resolved.map((entry) => [entry.call.toolCallId, entry]));
  for (const call of programToolCalls(program)) {
    const runs = byCall.get(call.toolCallId) ?? [];
    const entry = resolvedById.get(call.toolCallId);
    if (entry === undefined) {
      // The model never asked for it: its turn failed earlier (store faults).
      if (runs.length > 0) violations.push(`${call.toolCallId} (${call.toolName}) ran ${runs.length} times, but its turn ended before the model asked for it`);
      continue;
    }
    const [least, most] = allowedRuns(call, entry.outcome, mode);
    if (runs.length < least || runs.length > most) {
      violations.push(`${call.toolCallId} (${call.toolName}, ${call.effect}) ran ${runs.length} times and ended ${entry.outcome}; allowed ${least === most ? String(least) : `${least} to ${most}`} runs`);
    }
    const key = `${observation.flowId}/${call.toolCallId.replace(/-call-.*$/, "")}/${call.toolCallId}`;
    const details = runs.map((run) => run.details as ProgramToolRun);
    const attempts = details.map((run) => run.attempt);
    if (details.some((run) => run.idempotencyKey !== key)) violations.push(`${call.toolCallId} ran with idempotency keys ${JSON.stringify(details.map((run) => run.idempotencyKey))}, expected ${key} every time`);
    if (new Set(attempts).size !== attempts.length) violations.push(`${call.toolCallId} ran twice with one attempt number: attempts ${attempts.join(", ")}`);
  }
  return violations;
}

function eventsOf(events: readonly AgentEvent[], type: string, where: (event: AgentEvent) => boolean = () => true): AgentEvent[] {
  return events.filter((event) => event.type === type && where(event));
}

/** Checks the events each turn and call must have written; exact counts without failures, presence after a kill. */
function checkEvents(program: SessionProgram, observation: SessionProgramObservation, turns: readonly { turn: ProgramTurn; check: TurnCheck; messageCount: number }[], mode: ProgramRunMode): string[] {
  const violations: string[] = [];
  const { events } = observation;
  const countIs = (what: string, found: number, expected: number): void => {
    if (mode === "exact" ? found !== expected : found < expected) violations.push(`${found} ${what} events, expected ${mode === "exact" ? "" : "at least "}${expected}`);
  };
  const runsOf = (toolCallId: string): number => observation.toolRuns.filter((entry) => entry.name === toolCallId).length;
  for (const { turn, check, messageCount } of turns) {
    const ofTurn = (event: AgentEvent): boolean => event.turnId === turn.turnId;
    countIs(`turn_started of ${turn.turnId}`, eventsOf(events, "turn_started", ofTurn).length, 1);
    if (check.failedAt === undefined) {
      const completed = eventsOf(events, "turn_completed", ofTurn);
      countIs(`turn_completed of ${turn.turnId}`, completed.length, 1);
      const counted = completed.at(-1)?.payload.message_count;
      if (completed.length > 0 && counted !== messageCount - 1) violations.push(`turn_completed of ${turn.turnId} counts ${String(counted)} messages, expected ${messageCount - 1}`);
    } else {
      countIs(`turn_failed of ${turn.turnId}`, eventsOf(events, "turn_failed", ofTurn).length, 1);
    }
    countIs(`usage_recorded of ${turn.turnId}`, eventsOf(events, "usage_recorded", ofTurn).length, check.answered);
    for (const { call, outcome } of check.resolved) {
      const ofCall = (event: AgentEvent): boolean => event.payload.tool_call_id === call.toolCallId;
      const deferred = eventsOf(events, "tool_call_deferred", ofCall);
      countIs(`tool_call_deferred of ${call.toolCallId}`, deferred.length, 1);
      if (deferred.some((event) => event.payload.effect !== call.effect || event.payload.requires_approval !== call.requiresApproval)) {
        violations.push(`tool_call_deferred of ${call.toolCallId} says ${JSON.stringify(deferred.map((event) => event.payload))}, expected effect ${call.effect} and requires_approval ${String(call.requiresApproval)}`);
      }
      const finished = eventsOf(events, "tool_call_finished", ofCall);
      countIs(`tool_call_finished of ${call.toolCallId}`, finished.length, 1);
      const lastStatus = finished.at(-1)?.payload.status;
      if (finished.length > 0 && lastStatus !== programOutcomeStatus[outcome]) violations.push(`the last tool_call_finished of ${call.toolCallId} says ${String(lastStatus)}, but the call ended ${programOutcomeStatus[outcome]}`);
      const started = eventsOf(events, "tool_call_started", ofCall).length;
      // Each run writes tool_call_started first; a killed attempt may have written it without running.
      if (mode === "exact" ? started !== runsOf(call.toolCallId) : started < runsOf(call.toolCallId)) violations.push(`${started} tool_call_started events of ${call.toolCallId} for ${runsOf(call.toolCallId)} runs`);
      if (call.approval !== null) {
        const interruptId = `${call.toolCallId}-approval`;
        countIs(`interrupt_raised of ${call.toolCallId}`, eventsOf(events, "interrupt_raised", ofCall).length, 1);
        const resolvedEvents = eventsOf(events, "interrupt_resolved", (event) => event.payload.interrupt_id === interruptId);
        countIs(`interrupt_resolved of ${interruptId}`, resolvedEvents.length, 1);
        if (resolvedEvents.some((event) => event.payload.approved !== call.approval?.approved)) violations.push(`interrupt_resolved of ${interruptId} says approved ${JSON.stringify(resolvedEvents.map((event) => event.payload.approved))}, the person answered ${String(call.approval.approved)}`);
      }
    }
  }
  return violations;
}

/**
 * Compares what a run left with what `program` must leave in `mode`.
 * Returns every violation (empty when the run is right) and the calls and
 * turns that took an allowed outcome other than the planned one. Events are
 * checked without faults and after kills; under store faults they are best
 * effort and skipped.
 *
 * @example
 * const verdict = checkSessionProgram(program, observation, "exact");
 * assert.deepEqual(verdict.violations, []);
 */
export function checkSessionProgram(program: SessionProgram, observation: SessionProgramObservation, mode: ProgramRunMode): SessionProgramVerdict {
  const verdict: SessionProgramVerdict = { violations: [], degradedCalls: [], degradedTurns: [] };
  const { snapshot } = observation;
  const state = snapshot.state;
  if (state === null) {
    verdict.violations.push("the session has no state");
    return verdict;
  }
  if (state.turnCount !== program.turns.length) verdict.violations.push(`turnCount is ${state.turnCount}, the program has ${program.turns.length} turns`);
  if (state.activeTurnId !== null) verdict.violations.push(`turn ${state.activeTurnId} is still active`);
  const unknownTurns = snapshot.messages.filter((message) => !program.turns.some((turn) => turn.turnId === message.turnId));
  if (unknownTurns.length > 0) verdict.violations.push(`${unknownTurns.length} messages belong to no turn of the program, the first: ${describeMessage(unknownTurns[0])} of ${String(unknownTurns[0]?.turnId)}`);
  const turns = program.turns.map((turn) => {
    const messages = snapshot.messages.filter((message) => message.turnId === turn.turnId);
    return { turn, check: checkTurn(turn, messages, mode, verdict), messageCount: messages.length };
  });
  // The turns' messages must also come in turn order.
  const turnOrder = snapshot.messages.map((message) => message.turnId).filter((turnId, index, all) => turnId !== all[index - 1]);
  if (JSON.stringify(turnOrder) !== JSON.stringify(program.turns.map((turn) => turn.turnId))) verdict.violations.push(`the transcript's turns run ${JSON.stringify(turnOrder)}, expected each turn once, in order`);
  verdict.violations.push(...turns.flatMap((entry) => entry.check.violations));

  const last = turns.at(-1);
  if (last !== undefined) {
    const failedAt = last.check.failedAt;
    const expectedError = failedAt === undefined ? null : `Error: ${programModelErrorMessage(last.turn.turnId, failedAt)}`;
    const errorMatches = expectedError === null ? state.lastTurnError === null : mode === "exact" ? state.lastTurnError === expectedError : state.lastTurnError !== null;
    if (!errorMatches) verdict.violations.push(`lastTurnError is ${JSON.stringify(state.lastTurnError)}, expected ${JSON.stringify(expectedError)}`);
  }
  const answered = turns.reduce((sum, entry) => sum + entry.check.answered, 0);
  if (snapshot.usage.requests !== answered || snapshot.usage.inputTokens !== 10 * answered) {
    verdict.violations.push(`usage counts ${snapshot.usage.requests} requests and ${snapshot.usage.inputTokens} input tokens for ${answered} answered model calls: each committed call counts once, a failed or killed one never`);
  }
  const resolved = turns.flatMap((entry) => entry.check.resolved);
  verdict.violations.push(...checkToolRuns(program, observation, resolved, mode));
  if (mode !== "faulted") verdict.violations.push(...checkEvents(program, observation, turns, mode));
  return verdict;
}
