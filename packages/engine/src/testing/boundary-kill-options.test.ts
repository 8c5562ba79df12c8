import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { test } from "node:test";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import { resolveBoundaryKillLoopOptions } from "./boundary-kill-options.ts";

void test("the loop's options default to every boundary from the first, one run at once, and generous timeouts", () => {
  const resolved = resolveBoundaryKillLoopOptions({});
  assert.deepEqual({ ...resolved, onRun: undefined }, {
    fromBoundary: 1,
    toBoundary: Infinity,
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
  refused({ endTimeoutMs: 1.5 }, /option endTimeoutMs 1.5 is invalid/);
  refused({ fromBoundary: 5, toBoundary: 4 }, /^runBoundaryKillLoop toBoundary 4 is before fromBoundary 5: use toBoundary >= fromBoundary$/);
  refused({ failOnViolation: "yes" as unknown as boolean }, /option failOnViolation "yes" is invalid: use true or false/);
});
