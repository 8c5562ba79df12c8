/**
 * A session program: what one seeded session does, turn by turn. Each turn
 * has a user message and a scripted model: its model calls (some of which
 * fail once, or for good), and per call the parallel tool calls it asks for,
 * with each call's effect, approval decision and behaviour. The program is
 * data only; the runner, the tools and the approval driver act it out, and
 * the oracle computes what the session must end with from it alone.
 */
import type { ToolEffect } from "../../contract/values/tool-effect.ts";

/** What a tool does when it runs. */
export type ProgramToolBehavior =
  /** Returns its output; the first `transientFailures` attempts throw a plain Error first (retried by `CallTool`). */
  | { kind: "succeed"; transientFailures: number }
  /** Throws `ToolExecutionError`: recorded `failed`, never retried. */
  | { kind: "tool-error" }
  /** Throws a plain Error on every attempt, so the Step's retries run out. */
  | { kind: "crash" };

/** How the person answers a call's approval. */
export type ProgramApproval = { approved: true } | { approved: false; rejectionMessage: string | null };

/** One tool call of a model response. */
export interface ProgramToolCall {
  /** `<turnId>-call-<modelCall>-<index>`, the ID `ScriptedAgentRunner` gives it. */
  toolCallId: string;
  toolName: string;
  arguments: { n: number };
  effect: ToolEffect;
  requiresApproval: boolean;
  /** The decision for a call that asks; null for one that does not. */
  approval: ProgramApproval | null;
  behavior: ProgramToolBehavior;
}

/** One model call of a turn. */
export interface ProgramModelCall {
  /** 1 for the turn's first model call. */
  modelCall: number;
  /** Attempts of this call's `RunModel` that throw before the model answers (0 or 1). */
  transientFailures: number;
  /** Every attempt throws, so the turn fails here (`RecordTurnFailure`). */
  alwaysFails: boolean;
  /** The calls the response asks for, in order; empty for the turn's final answer. */
  toolCalls: ProgramToolCall[];
}

/** One turn: its user message and its model calls, the last of which answers or always fails. */
export interface ProgramTurn {
  /** `turn-<n>`. */
  turnId: string;
  userText: string;
  modelCalls: ProgramModelCall[];
}

/** A whole session, generated from `seed`. */
export interface SessionProgram {
  seed: number;
  turns: ProgramTurn[];
}

/** Every tool call of the program, in the order the model makes them. */
export function programToolCalls(program: SessionProgram): ProgramToolCall[] {
  return program.turns.flatMap((turn) => turn.modelCalls.flatMap((call) => call.toolCalls));
}

/** The size of a program, for reports. */
export function programSize(program: SessionProgram): { turns: number; modelCalls: number; toolCalls: number; approvals: number; singleAttemptCalls: number } {
  const calls = programToolCalls(program);
  return {
    turns: program.turns.length,
    modelCalls: program.turns.reduce((sum, turn) => sum + turn.modelCalls.length, 0),
    toolCalls: calls.length,
    approvals: calls.filter((call) => call.requiresApproval).length,
    singleAttemptCalls: calls.filter((call) => isSingleAttemptEffect(call.effect)).length,
  };
}

/** True for the effects that run in `CallSingleAttemptTool` (one attempt, never repeated). */
export function isSingleAttemptEffect(effect: ToolEffect): boolean {
  return effect === "non_idempotent_write" || effect === "unclassified";
}
