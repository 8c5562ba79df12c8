/**
 * The long-session plot as SVG: per-turn wall time against turn number
 * (every turn a dot, compacting turns marked, the median of each 50 turns a
 * line), and below it the store size and the attribute rows each turn read.
 * `svg-to-png.ts` rasterizes it.
 */

/** What the plot draws, one entry per turn unless said otherwise. */
export interface LongSessionPlotData {
  title: string;
  /** One line each, under the title. */
  subtitle: readonly string[];
  turnMs: readonly number[];
  /** Turns (1-based) whose Steps included a `CompactContext`. */
  compactingTurns: ReadonlySet<number>;
  attributeRowsRead: readonly number[];
  /** Store samples: turn number, database + WAL size, and the bytes of the attributes (Flow state) and events stream tables. */
  storeSizes: readonly { turn: number; bytes: number; attributeBytes: number; streamBytes: number }[];
  /** The two medians the target compares, drawn as bands. */
  comparedRanges: readonly { firstTurn: number; lastTurn: number; medianMs: number; label: string }[];
}

interface Frame {
  left: number;
  top: number;
  width: number;
  height: number;
}

const width = 1400;
const height = 900;
const colors = { dot: "#4f7fbf", compacting: "#d9822b", median: "#1b2a41", band: "#2e9e5b", rows: "#8a4fbf", size: "#c0392b", attributes: "#2e9e5b", stream: "#d9822b", grid: "#dde3ea", text: "#1b2a41" };

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function text(x: number, y: number, content: string, attributes = ""): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attributes}>${escapeXml(content)}</text>`;
}

/** A "nice" step (1, 2 or 5 × 10^n) that splits `span` into about `count` ticks. */
function tickStep(span: number, count: number): number {
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  return (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * power;
}

function formatTick(value: number): string {
  return Number.isInteger(value) ? value.toLocaleString("en-US") : value.toFixed(1);
}

function axes(frame: Frame, turns: number, yMaximum: number, yLabel: string, side: "left" | "right", showX: boolean): string[] {
  const parts: string[] = [];
  const yStep = tickStep(yMaximum, 6);
  for (let value = 0; value <= yMaximum + 1e-9; value += yStep) {
    const y = frame.top + frame.height - (value / yMaximum) * frame.height;
    if (side === "left") parts.push(`<line x1="${frame.left}" x2="${frame.left + frame.width}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="${colors.grid}"/>`);
    const x = side === "left" ? frame.left - 8 : frame.left + frame.width + 8;
    parts.push(text(x, y + 5, formatTick(value), `font-size="15" text-anchor="${side === "left" ? "end" : "start"}" fill="${colors.text}"`));
  }
  const labelX = side === "left" ? frame.left - 62 : frame.left + frame.width + 70;
  parts.push(text(labelX, frame.top + frame.height / 2, yLabel, `font-size="16" text-anchor="middle" fill="${colors.text}" transform="rotate(-90 ${labelX} ${frame.top + frame.height / 2})"`));
  if (showX) {
    const xStep = tickStep(turns, 10);
    for (let turn = 0; turn <= turns; turn += xStep) {
      const x = frame.left + (turn / turns) * frame.width;
      parts.push(`<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${frame.top}" y2="${frame.top + frame.height}" stroke="${colors.grid}"/>`);
      parts.push(text(x, frame.top + frame.height + 22, formatTick(turn), `font-size="15" text-anchor="middle" fill="${colors.text}"`));
    }
  }
  parts.push(`<rect x="${frame.left}" y="${frame.top}" width="${frame.width}" height="${frame.height}" fill="none" stroke="#9aa5b1"/>`);
  return parts;
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

function polyline(points: readonly [number, number][], color: string, strokeWidth: number): string {
  return `<polyline fill="none" stroke="${color}" stroke-width="${strokeWidth}" points="${points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" ")}"/>`;
}

/** The top panel: every turn's time, compacting turns in orange, the 50-turn medians and the compared medians. */
function timePanel(data: LongSessionPlotData, frame: Frame): string[] {
  const turns = data.turnMs.length;
  const sorted = [...data.turnMs].sort((left, right) => left - right);
  // The axis ends a little above the 99th percentile; slower turns sit on the top edge as open circles.
  const yMaximum = Math.max(1, (sorted[Math.floor(sorted.length * 0.99)] ?? 1) * 1.15);
  const x = (turn: number): number => frame.left + ((turn - 0.5) / turns) * frame.width;
  const y = (ms: number): number => frame.top + frame.height - (Math.min(ms, yMaximum) / yMaximum) * frame.height;
  const parts = axes(frame, turns, yMaximum, "wall time per turn (ms)", "left", true);
  data.turnMs.forEach((ms, index) => {
    const turn = index + 1;
    const compacting = data.compactingTurns.has(turn);
    const clipped = ms > yMaximum;
    const color = compacting ? colors.compacting : colors.dot;
    parts.push(`<circle cx="${x(turn).toFixed(1)}" cy="${y(ms).toFixed(1)}" r="${compacting ? 2.6 : 1.8}" ${clipped ? `fill="none" stroke="${color}"` : `fill="${color}" fill-opacity="0.55"`}/>`);
  });
  const medians: [number, number][] = [];
  for (let first = 0; first < turns; first += 50) {
    const slice = data.turnMs.slice(first, first + 50);
    medians.push([x(first + slice.length / 2 + 0.5), y(medianOf(slice))]);
  }
  parts.push(polyline(medians, colors.median, 2.5));
  for (const range of data.comparedRanges) {
    const bandY = y(range.medianMs);
    parts.push(`<line x1="${x(range.firstTurn).toFixed(1)}" x2="${x(range.lastTurn).toFixed(1)}" y1="${bandY.toFixed(1)}" y2="${bandY.toFixed(1)}" stroke="${colors.band}" stroke-width="5"/>`);
    parts.push(text(x((range.firstTurn + range.lastTurn) / 2), bandY - 12, range.label, `font-size="15" font-weight="600" text-anchor="middle" fill="${colors.band}"`));
  }
  parts.push(text(frame.left + frame.width / 2, frame.top + frame.height + 44, "turn number", `font-size="16" text-anchor="middle" fill="${colors.text}"`));
  return parts;
}

/** The bottom panel: store size (left axis, MiB) and attribute rows read per turn (right axis, 50-turn medians). */
function storePanel(data: LongSessionPlotData, frame: Frame): string[] {
  const turns = data.turnMs.length;
  const mebibytes = data.storeSizes.map((sample) => sample.bytes / (1024 * 1024));
  const sizeMaximum = Math.max(1, ...mebibytes) * 1.15;
  const rowsMaximum = Math.max(1, ...data.attributeRowsRead) * 1.15;
  const x = (turn: number): number => frame.left + (turn / turns) * frame.width;
  const parts = [
    ...axes(frame, turns, sizeMaximum, "store size (MiB)", "left", true),
    ...axes(frame, turns, rowsMaximum, "attribute rows read per turn", "right", false),
  ];
  const sizeLine = (bytesOf: (sample: LongSessionPlotData["storeSizes"][number]) => number, color: string): string =>
    polyline(data.storeSizes.map((sample) => [x(sample.turn), frame.top + frame.height - (bytesOf(sample) / (1024 * 1024) / sizeMaximum) * frame.height]), color, 2.5);
  parts.push(sizeLine((sample) => sample.bytes, colors.size), sizeLine((sample) => sample.streamBytes, colors.stream), sizeLine((sample) => sample.attributeBytes, colors.attributes));
  const rowMedians: [number, number][] = [];
  for (let first = 0; first < turns; first += 50) {
    const slice = data.attributeRowsRead.slice(first, first + 50);
    rowMedians.push([x(first + slice.length / 2), frame.top + frame.height - (medianOf(slice) / rowsMaximum) * frame.height]);
  }
  parts.push(polyline(rowMedians, colors.rows, 2.5));
  parts.push(text(frame.left + frame.width / 2, frame.top + frame.height + 44, "turn number", `font-size="16" text-anchor="middle" fill="${colors.text}"`));
  return parts;
}

function legend(x: number, y: number, entries: readonly { color: string; label: string; kind: "dot" | "line" }[]): string[] {
  return entries.flatMap((entry, index) => {
    const entryX = x + index * 250;
    const mark = entry.kind === "dot"
      ? `<circle cx="${entryX + 8}" cy="${y - 5}" r="5" fill="${entry.color}"/>`
      : `<line x1="${entryX}" x2="${entryX + 22}" y1="${y - 5}" y2="${y - 5}" stroke="${entry.color}" stroke-width="4"/>`;
    return [mark, text(entryX + 30, y, entry.label, `font-size="15" fill="${colors.text}"`)];
  });
}

/** The whole plot as an SVG document. */
export function renderLongSessionPlot(data: LongSessionPlotData): string {
  const timeFrame: Frame = { left: 100, top: 125, width: 1180, height: 415 };
  const storeFrame: Frame = { left: 100, top: 650, width: 1180, height: 180 };
  const parts = [
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    text(width / 2, 34, data.title, `font-size="24" font-weight="700" text-anchor="middle" fill="${colors.text}"`),
    ...data.subtitle.map((line, index) => text(width / 2, 60 + index * 21, line, `font-size="16" text-anchor="middle" fill="#52606d"`)),
    ...legend(timeFrame.left, 114, [
      { color: colors.dot, label: "one turn", kind: "dot" },
      { color: colors.compacting, label: "turn that compacted", kind: "dot" },
      { color: colors.median, label: "median of 50 turns", kind: "line" },
      { color: colors.band, label: "compared medians", kind: "line" },
    ]),
    ...timePanel(data, timeFrame),
    ...legend(storeFrame.left, 634, [
      { color: colors.size, label: "store (db + WAL)", kind: "line" },
      { color: colors.stream, label: "events stream table", kind: "line" },
      { color: colors.attributes, label: "Flow state (attributes)", kind: "line" },
      { color: colors.rows, label: "attribute rows read / turn (median of 50), right axis", kind: "line" },
    ]),
    ...storePanel(data, storeFrame),
  ];
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Arial, sans-serif">\n${parts.join("\n")}\n</svg>\n`;
}
