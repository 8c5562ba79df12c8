import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { SessionInspection } from "./api.ts";
import { chooseAxisLabels, estimateAxisLabelWidthPx, type AxisLabelCandidate, type PlacedAxisLabel } from "./axis-labels.ts";
import { formatDuration } from "./format.ts";
import { buildScale, buildTimelineRows } from "./timeline.ts";

/** Index pairs of slots that overlap (by more than rounding). */
function overlapping(labels: readonly { left: number; width: number }[]): [number, number][] {
  const pairs: [number, number][] = [];
  for (let first = 0; first < labels.length; first++) {
    for (let second = first + 1; second < labels.length; second++) {
      const [a, b] = [labels[first], labels[second]];
      if (a !== undefined && b !== undefined && a.left < b.left + b.width - 1e-9 && b.left < a.left + a.width - 1e-9) pairs.push([first, second]);
    }
  }
  return pairs;
}

/** A session whose first model call takes 6 s and whose later Steps take 40 ms each, between idle waits of 41 s, 9.1 s, 2.4 s and so on. */
function inspectionWithLongWaitsBetweenShortSteps(): SessionInspection {
  const waitsMs = [41_000, 9_100, 2_400, 3_000, 95_000, 2_000, 7_700, 12_000, 1_600, 4_400];
  let time = Date.parse("2026-12-02T10:00:00.000Z");
  const timeline = [];
  for (const [index, waitMs] of [0, ...waitsMs].entries()) {
    time += waitMs;
    const startedAt = new Date(time).toISOString();
    time += index === 0 ? 6_000 : 40;
    const finishedAt = new Date(time).toISOString();
    timeline.push({ executionId: String(index + 1), stepType: "RunModel", status: "completed", startedAt, finishedAt, attempts: [{ method: "execute", attempt: 1, status: "completed", startedAt, finishedAt, error: null, outcome: null }] });
  }
  return { createdAt: timeline[0]?.startedAt, timeline, activeExecutions: [] } as unknown as SessionInspection;
}

function gapCandidates(inspection: SessionInspection): AxisLabelCandidate[] {
  const scale = buildScale(buildTimelineRows(inspection, Date.parse("2026-12-03T00:00:00.000Z")));
  return scale.gaps.map((gap) => ({ key: gap.start, text: formatDuration(gap.end - gap.start), x: (gap.x0 + gap.x1) / 2, priority: gap.end - gap.start }));
}

describe("the Step timeline's axis labels", () => {
  it("labels of long waits between short Steps, which overlap centred on their gaps, are placed without overlapping and the longest waits keep theirs", () => {
    const trackWidthPx = 420;
    const candidates = gapCandidates(inspectionWithLongWaitsBetweenShortSteps());
    assert.equal(candidates.length, 10);
    // The old axis: every label centred on its gap at the width of its text.
    const centred = candidates.map((candidate) => ({ left: candidate.x * trackWidthPx - estimateAxisLabelWidthPx(candidate.text) / 2, width: estimateAxisLabelWidthPx(candidate.text) }));
    assert.ok(overlapping(centred).length > 0, "the fixture does not reproduce the overlap");

    const placed = chooseAxisLabels(candidates, { trackWidthPx });
    assert.deepEqual(overlapping(placed.map((label) => ({ left: label.left - 2, width: label.width + 4 }))), [], `labels overlap: ${JSON.stringify(placed)}`);
    assert.ok(placed.every((label) => label.left >= 0 && label.left + label.width <= trackWidthPx));
    const shown = placed.map((label) => label.text);
    assert.ok(shown.includes("1m 35s") && shown.includes("41s"), `the longest waits lost their labels: ${JSON.stringify(shown)}`);
    assert.ok(shown.length < candidates.length, "every label was kept although they cannot all fit");
  });

  it("labels with room stay centred on their marks, and one at an edge moves inside the track", () => {
    const placed = chooseAxisLabels([
      { key: 1, text: "41s", x: 0, priority: 41_000 },
      { key: 2, text: "2.4s", x: 0.5, priority: 2_400 },
    ], { trackWidthPx: 400 });
    assert.deepEqual(placed, [
      { key: 1, text: "41s", left: 0, width: estimateAxisLabelWidthPx("41s") },
      { key: 2, text: "2.4s", left: 200 - estimateAxisLabelWidthPx("2.4s") / 2, width: estimateAxisLabelWidthPx("2.4s") },
    ]);
  });

  it("of two colliding labels the longer wait's stays, whichever comes first", () => {
    const near = (firstPriority: number, secondPriority: number): AxisLabelCandidate[] => [
      { key: 1, text: "9.1s", x: 0.5, priority: firstPriority },
      { key: 2, text: "2.4s", x: 0.52, priority: secondPriority },
    ];
    assert.deepEqual(chooseAxisLabels(near(9_100, 2_400), { trackWidthPx: 400 }).map((label) => label.key), [1]);
    assert.deepEqual(chooseAxisLabels(near(2_400, 9_100), { trackWidthPx: 400 }).map((label) => label.key), [2]);
  });

  it("shows nothing before the track is measured, and no label wider than the track", () => {
    assert.deepEqual(chooseAxisLabels([{ key: 1, text: "41s", x: 0.5, priority: 1 }], { trackWidthPx: 0 }), []);
    assert.deepEqual(chooseAxisLabels([{ key: 1, text: "41s", x: 0.5, priority: 1 }], { trackWidthPx: 20 }), []);
  });

  it("never places two labels closer than the spacing, nor outside the track, for any marks and widths", () => {
    const candidate = fc.record({ text: fc.constantFrom("850ms", "2.4s", "41s", "3m 4s", "2h 5m", "1d 3h"), x: fc.double({ min: -0.2, max: 1.2, noNaN: true }), priority: fc.integer({ min: 0, max: 1e6 }) });
    fc.assert(fc.property(fc.array(candidate, { maxLength: 40 }), fc.integer({ min: 0, max: 1600 }), fc.integer({ min: 0, max: 12 }), (drawn, trackWidthPx, minSpacingPx) => {
      const placed: PlacedAxisLabel[] = chooseAxisLabels(drawn.map((entry, index) => ({ ...entry, key: index })), { trackWidthPx, minSpacingPx });
      assert.deepEqual(overlapping(placed.map((label) => ({ left: label.left - minSpacingPx / 2, width: label.width + minSpacingPx }))), []);
      for (const label of placed) assert.ok(label.left >= 0 && label.left + label.width <= trackWidthPx + 1e-9, JSON.stringify(label));
      if (trackWidthPx >= 60 && drawn.length > 0) assert.ok(placed.length > 0, "a track with room showed no label");
    }));
  });
});
