import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { test } from "node:test";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import { resolveBoundaryKillLoopOptions } from "./boundary-kill-options.ts";
import { boundaryKillSample } from "./boundary-kill-sample.ts";

void test("the loop's options default to every boundary from the first, one run at once, and generous timeouts", () => {
  const resolved = resolveBoundaryKillLoopOptions({});
  assert.deepEqual({ ...resolved, onRun: undefined }, {
    fromBoundary: 1,
    toBoundary: Infinity,
    boundaryStep: 1,
    maxRuns: 1000,
    concurrency: 1,
    firstProcessTimeoutMs: 60_000,
    endTimeoutMs: 20_000,
    readyTimeoutMs: 20_000,
    pollIntervalMs: 20,
    failOnViolation: true,
    compileCache: true,
    directory: tmpdir(),
    onRun: undefined,
  });
});

void test("a bad option is refused with a message that names it and says what to use", () => {
  const refused = (options: Parameters<typeof resolveBoundaryKillLoopOptions>[0], message: RegExp): void => {
    assert.throws(() => resolveBoundaryKillLoopOptions(options), (error: unknown) => InvalidInputError.isInstance(error) && message.test(error.message));
  };
  refused({ fromBoundary: 0 }, /^runBoundaryKillLoop option fromBoundary 0 is invalid: use a positive integer$/);
  refused({ concurrency: Infinity }, /option concurrency Infinity is invalid/);
  refused({ toBoundary: Infinity }, /option toBoundary Infinity is invalid/);
  refused({ boundaryStep: 0 }, /option boundaryStep 0 is invalid/);
  refused({ endTimeoutMs: 1.5 }, /option endTimeoutMs 1.5 is invalid/);
  refused({ fromBoundary: 5, toBoundary: 4 }, /^runBoundaryKillLoop toBoundary 4 is before fromBoundary 5: use toBoundary >= fromBoundary$/);
  refused({ failOnViolation: "yes" as unknown as boolean }, /option failOnViolation "yes" is invalid: use true or false/);
});

void test("a boundary sample kills at every step-th boundary from an offset its seed picks, a day's seed by default, and at every boundary when asked", () => {
  const day = 20_000;
  assert.deepEqual(
    [0, 1, 2, 3, 4].map((offset) => boundaryKillSample(4, {}, (day + offset) * 86_400_000 + 5).fromBoundary),
    [1, 2, 3, 4, 1],
    "consecutive days cover every offset",
  );
  const replayed = boundaryKillSample(4, { PERDURE_BOUNDARY_KILL_SEED: "7" });
  assert.deepEqual({ ...replayed, description: undefined }, { fromBoundary: 4, boundaryStep: 4, isEveryBoundary: false, seed: 7, description: undefined });
  assert.match(replayed.description, /^boundaries 4, 8, 12, … \(seed 7\); PERDURE_BOUNDARY_KILL_SEED=7 replays this sample, PERDURE_BOUNDARY_KILL_ALL=1 kills at every boundary$/);
  for (const every of [boundaryKillSample(4, { PERDURE_BOUNDARY_KILL_ALL: "1", PERDURE_BOUNDARY_KILL_SEED: "7" }), boundaryKillSample(1, {})]) {
    assert.deepEqual({ ...every }, { fromBoundary: 1, boundaryStep: 1, isEveryBoundary: true, seed: undefined, description: "every boundary" });
  }
  assert.equal(boundaryKillSample(4, { PERDURE_BOUNDARY_KILL_ALL: "0", PERDURE_BOUNDARY_KILL_SEED: "2" }).fromBoundary, 3);
  const refused = (run: () => unknown, message: RegExp): void => {
    assert.throws(run, (error: unknown) => InvalidInputError.isInstance(error) && message.test(error.message));
  };
  refused(() => boundaryKillSample(4, { PERDURE_BOUNDARY_KILL_SEED: "-1" }), /^PERDURE_BOUNDARY_KILL_SEED="-1" is invalid: use a non-negative integer$/);
  refused(() => boundaryKillSample(4, { PERDURE_BOUNDARY_KILL_ALL: "yes" }), /^PERDURE_BOUNDARY_KILL_ALL="yes" is invalid: use 1 for every boundary, or 0$/);
  refused(() => boundaryKillSample(0, {}), /boundaryKillSample step 0 is invalid/);
});
