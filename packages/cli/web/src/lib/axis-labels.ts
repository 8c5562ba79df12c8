// Chooses which labels the Step timeline's axis shows, and where. Squeezed
// idle gaps get a fixed share of the track each, so many of them (long waits
// between short Steps) leave slots narrower than their labels: centred on
// their gaps, neighbours would print over each other ("41s 9. 2.4s"). Here
// each label gets a slot as wide as its text, kept inside the track, and a
// label whose slot would touch a more important one's is left out.

/** A label the axis would like to show. */
export interface AxisLabelCandidate {
  /** Identifies the label across renders (the gap's start time). */
  key: number;
  text: string;
  /** Where the label's mark is, from 0 (the track's left edge) to 1 (its right edge). */
  x: number;
  /** Wins collisions over lower priorities: the gap's length. */
  priority: number;
}

/** A label to show: its slot in pixels from the track's left edge. */
export interface PlacedAxisLabel {
  key: number;
  text: string;
  left: number;
  width: number;
}

/** Options of {@link chooseAxisLabels}. */
export interface AxisLabelLayoutOptions {
  /** The track's width in pixels; nothing shows while it is 0 (not measured yet). */
  trackWidthPx: number;
  /**
   * The width of a label's slot in pixels: its text's width (measured where
   * the page can) plus {@link axisLabelPaddingPx}.
   * @default estimateAxisLabelWidthPx
   */
  labelWidthPx?: (text: string) => number;
  /** The least space between two slots, in pixels. @default 4 */
  minSpacingPx?: number;
}

/** The horizontal padding of `.tl-axis-label`, 3px on each side. */
export const axisLabelPaddingPx = 6;
/** Glyph widths at 10px bold of a wide sans-serif (DejaVu Sans Bold, Linux's usual fallback), upper bounds for the narrower ones. */
const wideGlyphPx = 11;
const narrowGlyphPx = 4;
const glyphPx = 7.2;

/**
 * A slot width at least that of `text` in an axis label (10px, semibold) in
 * common sans-serif fonts, padding included, for when the text cannot be
 * measured: the labels are durations such as `850ms`, `2.4s` and `3m 4s`.
 *
 * @example
 * estimateAxisLabelWidthPx("41s"); // 27.6
 */
export function estimateAxisLabelWidthPx(text: string): number {
  let width = axisLabelPaddingPx;
  for (const character of text) width += character === "m" || character === "w" ? wideGlyphPx : character === "." || character === " " ? narrowGlyphPx : glyphPx;
  return width;
}

/**
 * The labels to show, left to right: each slot is centred on its mark where
 * it fits, moved inside the track where it would stick out, and kept only if
 * it stays `minSpacingPx` clear of every slot of a higher priority (then of
 * an earlier mark, between equal priorities). No two slots overlap.
 *
 * @example
 * chooseAxisLabels(gaps.map((gap) => ({ key: gap.start, text: formatDuration(gap.end - gap.start), x: (gap.x0 + gap.x1) / 2, priority: gap.end - gap.start })), { trackWidthPx: 520 });
 */
export function chooseAxisLabels(candidates: readonly AxisLabelCandidate[], options: AxisLabelLayoutOptions): PlacedAxisLabel[] {
  const { trackWidthPx } = options;
  const labelWidthPx = options.labelWidthPx ?? estimateAxisLabelWidthPx;
  const minSpacingPx = options.minSpacingPx ?? 4;
  if (!(trackWidthPx > 0)) return [];
  const ranked = candidates
    .filter((candidate) => Number.isFinite(candidate.x))
    .toSorted((left, right) => right.priority - left.priority || left.x - right.x);
  const placed: PlacedAxisLabel[] = [];
  for (const candidate of ranked) {
    const width = labelWidthPx(candidate.text);
    if (!(width > 0) || width > trackWidthPx) continue;
    const centred = Math.min(1, Math.max(0, candidate.x)) * trackWidthPx - width / 2;
    const left = Math.min(trackWidthPx - width, Math.max(0, centred));
    const collides = placed.some((other) => left < other.left + other.width + minSpacingPx && other.left < left + width + minSpacingPx);
    if (!collides) placed.push({ key: candidate.key, text: candidate.text, left, width });
  }
  return placed.toSorted((left, right) => left.left - right.left);
}
