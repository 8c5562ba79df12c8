/** What a replay has seen so far: calls answered, tools run, and the first divergence. */
import type { ReplayDivergence } from "./replay-divergence.ts";

export class ReplayState {
  divergence: ReplayDivergence | null = null;
  modelCalls = 0;
  /** Model calls made in each turn, by turn ID. */
  readonly modelCallsByTurn = new Map<string, number>();
  readonly toolCallsRun: string[] = [];
  readonly toolCallsFromRecording: string[] = [];

  /** Keeps the first divergence only: what came after it follows from it. */
  diverge(divergence: ReplayDivergence): void {
    this.divergence ??= divergence;
  }
}
