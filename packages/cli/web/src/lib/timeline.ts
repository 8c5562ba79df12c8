// Turns the inspector's Step timeline into rows of bars on one time axis.
// Idle stretches (a person thinking, a wait for approval) can last hours
// while the work between them takes milliseconds, so gaps with no Step
// executing are squeezed to a fixed width and labelled with their length.
import type { SessionInspection, TimelineExecution } from "./api.ts";

export type StepCategory = "model" | "tool" | "wait" | "session";

export interface TimelineSegment {
  /**
   * `execute`: an attempt of the Step's work. `check`: an evaluation of its
   * wait condition (`wait_until`), usually a few milliseconds. `wait`: the
   * time between them, when the execution waited (for a person, a message,
   * other Steps, or a retry's backoff).
   */
  kind: "execute" | "check" | "wait";
  /** completed, failed, cancelled, or active while it still runs or waits. */
  status: string;
  method: string;
  attempt: number;
  start: number;
  end: number;
  error: string | null;
  outcome: unknown;
}

export interface TimelineRow {
  executionId: string;
  stepType: string;
  category: StepCategory;
  status: TimelineExecution["status"];
  /** For an active execution: the engine's status (waiting, ready, running, waiting_to_be_asked). */
  activeStatus: string | null;
  /** The waiting span first, then the attempts in order. */
  segments: TimelineSegment[];
  start: number;
  end: number;
  /** Attempts of `execute`, the work itself. */
  executeAttempts: number;
  failedAttempts: number;
  /** The latest error, when the execution failed or retried. */
  lastError: string | null;
  /** Known only from the active executions: no method finished yet, so its start is estimated. */
  estimatedStart: boolean;
}

export interface TimelineGap {
  start: number;
  end: number;
  x0: number;
  x1: number;
}

export interface TimelineScale {
  start: number;
  end: number;
  /** Maps a time to 0..1 across the track. */
  x: (time: number) => number;
  gaps: TimelineGap[];
}

export function categoryOf(stepType: string): StepCategory {
  if (stepType === "RunModel" || stepType === "CompactContext") return "model";
  if (stepType.startsWith("Await")) return "wait";
  if (stepType.startsWith("Call") || stepType === "PollToolTask") return "tool";
  return "session";
}

/** Rows in execution order; active executions run to `now`. */
export function buildTimelineRows(inspection: SessionInspection, now: number): TimelineRow[] {
  const activeStatuses = new Map(inspection.activeExecutions.map((active) => [active.executionId, active.status]));
  const rows: TimelineRow[] = inspection.timeline.map((execution) => {
    const attempts: TimelineSegment[] = execution.attempts.map((attempt) => ({
      kind: attempt.method === "wait_until" ? "check" : "execute",
      status: attempt.status,
      method: attempt.method,
      attempt: attempt.attempt,
      start: Date.parse(attempt.startedAt),
      end: Math.max(Date.parse(attempt.finishedAt), Date.parse(attempt.startedAt)),
      error: attempt.error,
      outcome: attempt.outcome,
    }));
    const executes = execution.attempts.filter((attempt) => attempt.method === "execute");
    const failed = execution.attempts.filter((attempt) => attempt.status === "failed");
    const start = Date.parse(execution.startedAt);
    const active = execution.status === "active";
    const activeStatus = active ? (activeStatuses.get(execution.executionId) ?? "running") : null;
    const end = active ? Math.max(now, Date.parse(execution.finishedAt)) : Date.parse(execution.finishedAt);
    const segments: TimelineSegment[] = [];
    if (end > start) segments.push(waitSegment(start, end, active ? "active" : execution.status));
    segments.push(...attempts);
    if (active && activeStatus === "running") segments.push(runningSegment(Date.parse(execution.finishedAt), now, (executes.at(-1)?.attempt ?? 0) + 1));
    return {
      executionId: execution.executionId,
      stepType: execution.stepType,
      category: categoryOf(execution.stepType),
      status: execution.status,
      activeStatus,
      segments,
      start,
      end,
      executeAttempts: executes.length,
      failedAttempts: failed.length,
      lastError: failed.at(-1)?.error ?? null,
      estimatedStart: false,
    };
  });
  const known = new Set(rows.map((row) => row.executionId));
  const lastEnd = inspection.timeline.reduce((latest, execution) => Math.max(latest, Date.parse(execution.finishedAt)), Date.parse(inspection.createdAt));
  for (const active of inspection.activeExecutions) {
    if (known.has(active.executionId)) continue;
    const start = Math.min(lastEnd, now);
    rows.push({
      executionId: active.executionId,
      stepType: active.stepType,
      category: categoryOf(active.stepType),
      status: "active",
      activeStatus: active.status,
      segments: [active.status === "running" ? runningSegment(start, now, 1) : waitSegment(start, Math.max(start, now), "active")],
      start,
      end: Math.max(start, now),
      executeAttempts: 0,
      failedAttempts: 0,
      lastError: null,
      estimatedStart: true,
    });
  }
  return rows.sort((left, right) => compareExecutionIds(left.executionId, right.executionId));
}

/**
 * Labels the executions that start a turn: an AwaitUserMessage (or a
 * StartAgentSession with a first message) whose decision moves to RunModel.
 * The labels are inferred from the Step graph, so they are dropped when their
 * count disagrees with the session's turn count.
 */
export function inferTurnStarts(rows: readonly TimelineRow[], turnCount: number): Map<string, string> {
  const starts = new Map<string, string>();
  for (const row of rows) {
    if (row.stepType !== "AwaitUserMessage" && row.stepType !== "StartAgentSession") continue;
    const decision = row.segments.find((segment) => segment.kind === "execute" && segment.status === "completed")?.outcome as { moveTo?: unknown } | undefined;
    if (Array.isArray(decision?.moveTo) && decision.moveTo.includes("RunModel")) starts.set(row.executionId, `turn ${starts.size + 1}`);
  }
  return starts.size === turnCount ? starts : new Map<string, string>();
}

function waitSegment(start: number, end: number, status: string): TimelineSegment {
  return { kind: "wait", status, method: "waiting", attempt: 0, start, end, error: null, outcome: undefined };
}

function runningSegment(start: number, now: number, attempt: number): TimelineSegment {
  return { kind: "execute", status: "active", method: "execute", attempt, start, end: Math.max(start, now), error: null, outcome: undefined };
}

function compareExecutionIds(left: string, right: string): number {
  const a = Number(left);
  const b = Number(right);
  if (Number.isFinite(a) && Number.isFinite(b)) return a - b;
  return left.localeCompare(right);
}

/**
 * A piecewise-linear axis: time where a Step executes is linear, and each
 * idle gap longer than `compressAfterMs` takes a fixed slot instead.
 */
export function buildScale(rows: readonly TimelineRow[], compressAfterMs = 1500): TimelineScale {
  const segments = rows.flatMap((row) => row.segments).filter((segment) => Number.isFinite(segment.start) && Number.isFinite(segment.end));
  if (segments.length === 0) return { start: 0, end: 0, x: () => 0, gaps: [] };
  const start = Math.min(...segments.map((segment) => segment.start));
  const end = Math.max(...segments.map((segment) => segment.end));
  if (end <= start) return { start, end, x: () => 0, gaps: [] };

  const busy = mergeIntervals(segments.filter((segment) => segment.kind !== "wait").map((segment) => [segment.start, segment.end] as [number, number]));
  const boundaries = [...new Set(segments.flatMap((segment) => [segment.start, segment.end]).concat(busy.flat()))].sort((a, b) => a - b);
  interface Piece { start: number; end: number; compressed: boolean }
  const pieces: Piece[] = [];
  for (let index = 0; index < boundaries.length - 1; index++) {
    const pieceStart = boundaries[index] as number;
    const pieceEnd = boundaries[index + 1] as number;
    const covered = busy.some(([busyStart, busyEnd]) => busyStart <= pieceStart && busyEnd >= pieceEnd);
    const compressed = !covered && pieceEnd - pieceStart > compressAfterMs;
    const previous = pieces.at(-1);
    // Join neighbours of the same kind, so one long wait is one gap.
    if (previous !== undefined && previous.compressed && compressed) previous.end = pieceEnd;
    else pieces.push({ start: pieceStart, end: pieceEnd, compressed });
  }
  const gapCount = pieces.filter((piece) => piece.compressed).length;
  const linearTotal = pieces.filter((piece) => !piece.compressed).reduce((sum, piece) => sum + (piece.end - piece.start), 0);
  const gapWidth = linearTotal === 0 ? 1 / Math.max(1, gapCount) : Math.min(0.07, 0.4 / Math.max(1, gapCount));
  const linearWidth = 1 - gapWidth * gapCount;
  const placed: { piece: Piece; x0: number; x1: number }[] = [];
  let cursor = 0;
  for (const piece of pieces) {
    const width = piece.compressed ? gapWidth : linearTotal === 0 ? 0 : ((piece.end - piece.start) / linearTotal) * linearWidth;
    placed.push({ piece, x0: cursor, x1: cursor + width });
    cursor += width;
  }
  const x = (time: number): number => {
    if (time <= start) return 0;
    if (time >= end) return 1;
    for (const { piece, x0, x1 } of placed) {
      if (time <= piece.end) {
        const span = piece.end - piece.start;
        return span <= 0 ? x0 : x0 + ((time - piece.start) / span) * (x1 - x0);
      }
    }
    return 1;
  };
  const gaps = placed.filter(({ piece }) => piece.compressed).map(({ piece, x0, x1 }) => ({ start: piece.start, end: piece.end, x0, x1 }));
  return { start, end, x, gaps };
}

function mergeIntervals(intervals: [number, number][]): [number, number][] {
  const sorted = [...intervals].sort((left, right) => left[0] - right[0]);
  const merged: [number, number][] = [];
  for (const interval of sorted) {
    const last = merged.at(-1);
    if (last !== undefined && interval[0] <= last[1]) last[1] = Math.max(last[1], interval[1]);
    else merged.push([interval[0], interval[1]]);
  }
  return merged;
}
