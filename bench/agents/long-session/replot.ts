/**
 * Draws the plot of a recorded long-session run again from its JSON, such
 * as after a change to the plot:
 *
 *   node agents/long-session/replot.ts results/recorded/long-session-run-1.json results/recorded/long-session-run-1.png
 *
 * Paths are taken from bench/.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { benchDirectory } from "../../engine/cli.ts";
import { writeLongSessionPlot, type LongSessionPlotDetails } from "./long-session-plot-file.ts";

const [jsonPath, pngPath] = process.argv.slice(2);
if (jsonPath === undefined || pngPath === undefined || !pngPath.endsWith(".png")) {
  throw new Error(`usage: node agents/long-session/replot.ts <run JSON> <PNG path>; got ${JSON.stringify(process.argv.slice(2))}`);
}
const report = JSON.parse(readFileSync(resolve(benchDirectory, jsonPath), "utf8")) as { details: Record<string, LongSessionPlotDetails | undefined> };
const details = report.details["long-session"] ?? report.details["no-compaction-baseline"];
if (details === undefined) throw new Error(`${jsonPath} holds no long-session run; its scenarios are ${Object.keys(report.details).join(", ")}`);
await writeLongSessionPlot(details, resolve(benchDirectory, pngPath));
console.log(`wrote ${pngPath} and its SVG`);
