import assert from "node:assert/strict";
import { it } from "node:test";
import { hasOwnYoungGenerationFlag, startYoungGenerationCap, v8Controls, type YoungGenerationControls } from "./young-generation-cap.ts";

/** Controls whose young generation the test sizes and whose collections it runs. */
function fakeControls(bytes: number): YoungGenerationControls & { bytes: number; factors: number[]; collect(): void; watching: boolean } {
  let check: (() => void) | undefined;
  const controls = {
    bytes,
    factors: [] as number[],
    watching: false,
    youngGenerationBytes: () => controls.bytes,
    setGrowthFactor: (factor: number) => void controls.factors.push(factor),
    afterGarbageCollection: (onCollection: () => void) => {
      check = onCollection;
      controls.watching = true;
      return () => {
        check = undefined;
        controls.watching = false;
      };
    },
    collect: () => check?.(),
  };
  return controls;
}

const mebibyte = 1024 * 1024;

it("stops the young generation's growth at the cap, lets it grow again below it, and restores the default on stop", () => {
  const controls = fakeControls(8 * mebibyte);
  const cap = startYoungGenerationCap({ capBytes: 32 * mebibyte, controls, execArgv: [], nodeOptions: undefined });
  assert.equal(cap.active, true);
  // Below the cap: V8's default growth stays.
  assert.deepEqual(controls.factors, []);
  controls.bytes = 16 * mebibyte;
  controls.collect();
  assert.deepEqual(controls.factors, []);
  controls.bytes = 32 * mebibyte;
  controls.collect();
  assert.deepEqual(controls.factors, [1]);
  assert.equal(cap.holding, true);
  // Every later collection at the cap changes nothing.
  controls.collect();
  assert.deepEqual(controls.factors, [1]);
  // The idle release shrank it: growth is allowed again, up to the cap.
  controls.bytes = 1 * mebibyte;
  controls.collect();
  assert.deepEqual(controls.factors, [1, 2]);
  controls.bytes = 64 * mebibyte;
  controls.collect();
  assert.deepEqual(controls.factors, [1, 2, 1]);
  cap.stop();
  assert.deepEqual(controls.factors, [1, 2, 1, 2]);
  assert.equal(controls.watching, false);
});

it("holds at once when the young generation is already at the cap when it starts", () => {
  const controls = fakeControls(32 * mebibyte);
  const cap = startYoungGenerationCap({ capBytes: 32 * mebibyte, controls, execArgv: [], nodeOptions: undefined });
  assert.deepEqual(controls.factors, [1]);
  cap.stop();
  assert.deepEqual(controls.factors, [1, 2]);
});

it("leaves a process that chose its own young-generation size alone", () => {
  for (const [execArgv, nodeOptions] of [[["--max-semi-space-size=8"], undefined], [[], "--max-old-space-size=512 --max-semi-space-size=64"], [["--semi-space-growth-factor=4"], ""], [[], "--min_semi_space_size=2"]] as const) {
    assert.equal(hasOwnYoungGenerationFlag(execArgv, nodeOptions), true, `${execArgv.join(" ")} ${nodeOptions ?? ""}`);
    const controls = fakeControls(64 * mebibyte);
    const cap = startYoungGenerationCap({ controls, execArgv, nodeOptions });
    assert.equal(cap.active, false);
    assert.equal(controls.watching, false);
    cap.stop();
    assert.deepEqual(controls.factors, []);
  }
  assert.equal(hasOwnYoungGenerationFlag(["--max-old-space-size=512", "--conditions=perdure-source"], "--enable-source-maps"), false);
});

it("reads the size of V8's young generation", () => {
  // The cap finds the young generation by V8's space name; a renamed space would read as 0 and never cap.
  assert.ok(v8Controls.youngGenerationBytes() > 0);
});
