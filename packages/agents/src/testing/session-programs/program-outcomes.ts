/**
 * The outcomes a program's tool call may end with, and which of them the
 * contract allows: exactly the planned one when nothing failed, and the
 * contract's other outcomes when a Worker was killed or the store failed.
 */
import {
  failedToolResult, failedToolResultPrefix, outcomeUnknownAfterToolErrorPrefix, outcomeUnknownToolResult, rejectedToolResult, toolCallNotRunErrorPrefix,
} from "../../contract/values/result-texts.ts";
import { programToolCrashMessage, programToolErrorMessage, programToolOutput } from "./program-texts.ts";
import { isSingleAttemptEffect, type ProgramToolCall } from "./session-program.ts";

/** What went wrong during a run: nothing, one SIGKILL of the Worker process, or injected store faults. */
export type ProgramRunMode = "exact" | "killed" | "faulted";

/**
 * How a call ended, read from its result text:
 * - `succeeded`: the tool's output.
 * - `tool-error`: `failed` with the tool's `ToolExecutionError` message.
 * - `rejected`: the person's rejection.
 * - `crash-route`: `failed` by `RecordToolFailure` after the tool's own crashes.
 * - `other-route`: `failed` by `RecordToolFailure` after another last error (a lost Worker, a store fault).
 * - `outcome-unknown`: `outcome_unknown`.
 * - `not-run`: `failed` with the prefix of a call whose Step never reached a Worker.
 */
export type ProgramOutcomeKind = "succeeded" | "tool-error" | "rejected" | "crash-route" | "other-route" | "outcome-unknown" | "not-run";

/** The stored status of each outcome. */
export const programOutcomeStatus: Record<ProgramOutcomeKind, "succeeded" | "failed" | "rejected" | "outcome_unknown"> = {
  "succeeded": "succeeded",
  "tool-error": "failed",
  "rejected": "rejected",
  "crash-route": "failed",
  "other-route": "failed",
  "outcome-unknown": "outcome_unknown",
  "not-run": "failed",
};

/** The `${type}: ${message}` recovery detail of a plain Error the tool threw. */
function crashDetail(call: ProgramToolCall): string {
  return `Error: ${programToolCrashMessage(call.toolName)}`;
}

/** The outcome of `call` when nothing fails. */
export function plannedOutcome(call: ProgramToolCall): ProgramOutcomeKind {
  if (call.approval !== null && !call.approval.approved) return "rejected";
  switch (call.behavior.kind) {
    case "succeed":
      return "succeeded";
    case "tool-error":
      return "tool-error";
    case "crash":
      // A read is `failed` after its retries; a write may have taken effect.
      return call.effect === "read" ? "crash-route" : "outcome-unknown";
  }
}

/**
 * The outcomes the contract allows for `call` in `mode`. A kill costs a
 * retried call one attempt (its retries still suffice, as programs fail a
 * retried call at most once before it succeeds) and can leave a
 * single-attempt call `outcome_unknown` (or not run); store faults can
 * exhaust any call's attempts. A rejection is never undone.
 */
export function allowedOutcomes(call: ProgramToolCall, mode: ProgramRunMode): ReadonlySet<ProgramOutcomeKind> {
  const planned = plannedOutcome(call);
  const allowed = new Set<ProgramOutcomeKind>([planned]);
  if (mode === "exact" || planned === "rejected") return allowed;
  if (isSingleAttemptEffect(call.effect)) {
    allowed.add("outcome-unknown").add("not-run");
    return allowed;
  }
  // The last attempt of a call that crashes on every attempt may be the killed one.
  if (mode === "killed") {
    if (planned === "crash-route") allowed.add("other-route");
    return allowed;
  }
  allowed.add("not-run");
  if (call.effect === "read") allowed.add("crash-route").add("other-route");
  else allowed.add("outcome-unknown");
  return allowed;
}

/** Reads a stored result text back as an outcome; undefined for a text no outcome of `call` produces. */
export function outcomeOfResult(call: ProgramToolCall, text: string): ProgramOutcomeKind | undefined {
  if (text === programToolOutput(call.toolName, call.toolCallId, call.arguments.n)) return "succeeded";
  if (text === failedToolResult(programToolErrorMessage(call.toolName, call.arguments.n))) return "tool-error";
  if (call.approval !== null && !call.approval.approved && text === rejectedToolResult(call.approval.rejectionMessage)) return "rejected";
  if (text === outcomeUnknownToolResult || text.startsWith(outcomeUnknownAfterToolErrorPrefix)) return "outcome-unknown";
  if (text.startsWith(toolCallNotRunErrorPrefix)) return "not-run";
  if (text === failedToolResult(crashDetail(call))) return "crash-route";
  if (text.startsWith(failedToolResultPrefix)) return "other-route";
  return undefined;
}

/** How often the tool of `call` really runs when nothing fails. */
export function plannedRuns(call: ProgramToolCall): number {
  if (call.approval !== null && !call.approval.approved) return 0;
  switch (call.behavior.kind) {
    case "succeed":
      return call.behavior.transientFailures + 1;
    case "tool-error":
      return 1;
    case "crash":
      return isSingleAttemptEffect(call.effect) ? 1 : 3;
  }
}

/**
 * The runs the contract allows for a call that ended with `outcome` in
 * `mode`, as `[least, most]`: exact without failures; with them, a
 * single-attempt call runs at most once (exactly once when its result came
 * from the tool), a retried call at most its 3 attempts, and a rejected or
 * never-started call not at all.
 */
export function allowedRuns(call: ProgramToolCall, outcome: ProgramOutcomeKind, mode: ProgramRunMode): [number, number] {
  if (mode === "exact") return [plannedRuns(call), plannedRuns(call)];
  if (outcome === "rejected" || outcome === "not-run") return [0, 0];
  const most = isSingleAttemptEffect(call.effect) ? 1 : 3;
  const ranForSure = outcome === "succeeded" || outcome === "tool-error" || outcome === "crash-route";
  return [ranForSure ? 1 : 0, most];
}
