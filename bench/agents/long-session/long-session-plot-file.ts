/**
 * Draws the long-session plot from a run's recorded details, so a run's PNG
 * (and the SVG beside it) can be written when it ends, or again later from
 * its JSON with `replot.ts`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { median } from "../../engine/support.ts";
import { renderLongSessionPlot } from "./long-session-plot.ts";
import type { StoreFootprint } from "./store-footprint.ts";
import { writeSvgAsPng } from "./svg-to-png.ts";

/** The part of a run's `details` the plot reads. */
export interface LongSessionPlotDetails {
  turns: number;
  compaction: { contextWindowTokens: number } | null;
  comparedRanges: { early: [number, number]; late: [number, number] };
  compactingTurns: number[];
  /** Turn times of the fresh reference sessions, by session ID (runs before they existed have none). */
  referenceTurnMs?: Record<string, number[]>;
  footprints: { turn: number; footprint: StoreFootprint }[];
  turnMs: number[];
  attributeRowsRead: number[];
}

function rangeText([first, last]: [number, number]): string {
  return `turns ${first.toLocaleString("en-US")}–${last.toLocaleString("en-US")}`;
}

/** The second subtitle line: the compared medians, their ratio and, when recorded, the ratio against the reference sessions. */
function comparisonText(details: LongSessionPlotDetails, earlyMedian: number, lateMedian: number): string {
  const text = `median ${earlyMedian.toFixed(2)} ms (${rangeText(details.comparedRanges.early)}) → ${lateMedian.toFixed(2)} ms (${rangeText(details.comparedRanges.late)}), ratio ${(lateMedian / earlyMedian).toFixed(2)}`;
  const early = details.referenceTurnMs?.["reference-early"];
  const late = details.referenceTurnMs?.["reference-late"];
  if (early === undefined || late === undefined || early.length === 0 || late.length === 0) return text;
  return `${text}; ${((lateMedian / median(late)) / (earlyMedian / median(early))).toFixed(2)} against fresh reference sessions run beside each range`;
}

/** Writes the plot of `details` to `pngPath` and the SVG beside it. */
export async function writeLongSessionPlot(details: LongSessionPlotDetails, pngPath: string): Promise<void> {
  const inRange = ([first, last]: [number, number]) => details.turnMs.slice(first - 1, last);
  const earlyMedian = median(inRange(details.comparedRanges.early));
  const lateMedian = median(inRange(details.comparedRanges.late));
  const policyText = details.compaction === null
    ? "no compaction policy, so no retention (the baseline)"
    : `context window ${details.compaction.contextWindowTokens.toLocaleString("en-US")} tokens, ${details.compactingTurns.length} compactions, retention 1,000 messages`;
  const svg = renderLongSessionPlot({
    title: `Perdure: a ${details.turns.toLocaleString("en-US")}-turn ${details.compaction === null ? "" : "compacting "}session on SQLite (scripted model, one read tool per turn)`,
    subtitle: [policyText, comparisonText(details, earlyMedian, lateMedian)],
    turnMs: details.turnMs,
    compactingTurns: new Set(details.compactingTurns),
    attributeRowsRead: details.attributeRowsRead,
    storeSizes: details.footprints.map((sample) => ({
      turn: sample.turn,
      bytes: sample.footprint.databaseBytes + sample.footprint.walBytes,
      attributeBytes: sample.footprint.tableBytes.attributes ?? 0,
      streamBytes: sample.footprint.tableBytes.stream_messages ?? 0,
    })),
    comparedRanges: [
      { firstTurn: details.comparedRanges.early[0], lastTurn: details.comparedRanges.early[1], medianMs: earlyMedian, label: `${earlyMedian.toFixed(2)} ms` },
      { firstTurn: details.comparedRanges.late[0], lastTurn: details.comparedRanges.late[1], medianMs: lateMedian, label: `${lateMedian.toFixed(2)} ms` },
    ],
  });
  mkdirSync(dirname(pngPath), { recursive: true });
  writeFileSync(pngPath.replace(/\.png$/, ".svg"), svg);
  await writeSvgAsPng(svg, pngPath, { width: 1400, height: 900 });
}
