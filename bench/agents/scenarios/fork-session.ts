import { forkSession } from "@perdure/agents";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "../../engine/support.ts";
import { median, withTimeLimit } from "../../engine/support.ts";
import { openSessionBench, percentile, runOneTurn, startSession } from "../session-bench.ts";

/**
 * `forkSession` on the real SQLite store: the time from the call to the
 * fork's commit (the source read on one view, then one start transaction
 * with every inherited row), for a fork at the middle and at the end of
 * sessions of two lengths. The bench's Worker runs each fork's start Step
 * meanwhile, as a deployment's would; the time is the call's, to its commit.
 */
export async function measureForkSession(settings: BenchmarkSettings): Promise<ScenarioResult> {
  const lengths = settings.quick ? [10, 100] : [10, 200];
  const forksPerPoint = settings.quick ? 20 : 50;
  const bench = await openSessionBench("process-crash-safe");
  try {
    const points = await withTimeLimit("fork session", 120_000, (async () => {
      const measured: { turns: number; throughTurn: number; messages: number; ms: number[] }[] = [];
      for (const turns of lengths) {
        const sourceId = `source-${turns}`;
        await startSession(bench, sourceId);
        for (let turn = 1; turn <= turns; turn++) await runOneTurn(bench, sourceId, turn);
        for (const throughTurn of [Math.floor(turns / 2), turns]) {
          const ms: number[] = [];
          let messages = 0;
          for (let fork = 0; fork < forksPerPoint; fork++) {
            const startedAt = performance.now();
            const result = await forkSession(bench.client, bench.flow, { sourceSessionId: sourceId, throughTurn, sessionId: `fork-${turns}-${throughTurn}-${fork}` });
            ms.push(performance.now() - startedAt);
            messages = result.lineage.inheritedMessageCount;
          }
          measured.push({ turns, throughTurn, messages, ms });
        }
      }
      return measured;
    })());
    bench.errors.throwIfAny();
    const measurements: Measurement[] = points.flatMap((point) => {
      const scenario = `fork-session ${point.turns} turns`;
      return [
        { scenario, metric: `fork through turn ${point.throughTurn}, median`, value: median(point.ms), unit: "ms", note: `${point.messages} messages inherited, ${point.ms.length} forks` },
        { scenario, metric: `fork through turn ${point.throughTurn}, p99`, value: percentile(point.ms, 99), unit: "ms" },
      ];
    });
    return { measurements, details: { points: points.map((point) => ({ ...point, ms: point.ms.map((value) => Math.round(value * 1000) / 1000) })) } };
  } finally {
    await bench.dispose();
  }
}
