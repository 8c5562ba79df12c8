/**
 * The simulation as `node:test` tests: the regression seeds, a range of
 * seeds, and a determinism check. By default the range is 100 seeds that
 * move each day (UTC) through 1 to 21,000, so 210 days of `npm test` run what
 * the soak script runs at once (1 to 21,000). Environment:
 * `PERDURE_SIM_SEED=<n>` runs that one seed and prints its trace tail;
 * `PERDURE_SIM_SEEDS=<n>` runs n seeds; `PERDURE_SIM_FIRST_SEED=<n>` starts
 * the range there (replays a day's range; the soak script sets 1).
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { InvalidInputError } from "../../errors/invalid-input-error.ts";
import { regressionSeeds } from "./regression-seeds.ts";
import type { SimulationMode } from "./simulation-plan.ts";
import { runSimulation, type SimulationResult } from "./simulation-run.ts";

/** Seeds of each mode in the default suite (`npm test`); `npm run test:soak` runs 1 to 21,000. */
export const defaultSeedCount = 100;
/** The default ranges cycle through seeds 1 to `defaultSeedCount * rotatingRanges`, one range a day. */
const rotatingRanges = 210;
const millisecondsPerDay = 86_400_000;
/** Seeds per test. */
const seedsPerTest = 100;
/** Seeds run twice to prove a seed determines its run. */
const determinismSeeds = 10;

function integerFromEnvironment(name: string, fallback: number | undefined, minimum: number): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < minimum) throw new InvalidInputError(`${name}=${JSON.stringify(text)} is invalid: use an integer of at least ${minimum}`);
  return value;
}

function replayCommand(testFile: string, seed: number): string {
  return `PERDURE_SIM_SEED=${seed} node --conditions=perdure-source --test ${testFile}`;
}

function describeFailure(result: SimulationResult, testFile: string): string {
  return `seed ${result.seed} (${result.mode}): ${result.violations.join("; ")}\n  replay: ${replayCommand(testFile, result.seed)}`;
}

/** Defines the simulation tests of `mode` in the calling test file. */
export function defineSimulationTests(mode: SimulationMode, testFileUrl: string): void {
  const testFile = relative(process.cwd(), fileURLToPath(testFileUrl));
  const single = integerFromEnvironment("PERDURE_SIM_SEED", undefined, 0);
  if (single !== undefined) {
    void test(`simulation seed ${single} (${mode}) holds every invariant`, async (t) => {
      const result = await runSimulation(single, mode);
      t.diagnostic(`stats ${JSON.stringify(result.stats)}; trace ${result.traceHash}`);
      if (result.violations.length > 0) console.log(result.traceTail.join("\n"));
      assert.deepEqual(result.violations, [], describeFailure(result, testFile));
    });
    return;
  }
  const count = integerFromEnvironment("PERDURE_SIM_SEEDS", defaultSeedCount, 1)!;
  const todaysFirstSeed = 1 + defaultSeedCount * (Math.floor(Date.now() / millisecondsPerDay) % rotatingRanges);
  const firstSeed = integerFromEnvironment("PERDURE_SIM_FIRST_SEED", todaysFirstSeed, 0)!;

  void test(`the ${mode} regression seeds hold every invariant`, async () => {
    const failures: string[] = [];
    for (const regression of regressionSeeds.filter((entry) => entry.mode === mode)) {
      const result = await runSimulation(regression.seed, mode, { oneRequest: regression.oneRequest });
      if (result.violations.length > 0) failures.push(`${describeFailure(result, testFile)}\n  (this seed once found: ${regression.found})`);
    }
    assert.deepEqual(failures, []);
  });

  // Chunks keep each test well inside the runner's per-test timeout on a loaded machine.
  const totals = { seeds: 0, events: 0, transactions: 0, faults: 0, crashes: 0, pauses: 0, orders: 0, finished: 0, virtualMs: 0, seconds: 0 };
  for (let chunkStart = firstSeed; chunkStart < firstSeed + count; chunkStart += seedsPerTest) {
    const chunkEnd = Math.min(firstSeed + count, chunkStart + seedsPerTest) - 1;
    void test(`${mode} simulation seeds ${chunkStart} to ${chunkEnd} hold every invariant`, async (t) => {
      const startedAt = performance.now();
      const failures: string[] = [];
      for (let seed = chunkStart; seed <= chunkEnd; seed++) {
        const result = await runSimulation(seed, mode);
        totals.seeds += 1;
        for (const key of ["events", "transactions", "faults", "crashes", "pauses", "orders", "finished", "virtualMs"] as const) totals[key] += result.stats[key];
        if (result.violations.length > 0) failures.push(describeFailure(result, testFile));
      }
      totals.seconds += (performance.now() - startedAt) / 1000;
      t.diagnostic(`${chunkEnd - chunkStart + 1} seeds in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
      if (chunkEnd === firstSeed + count - 1) {
        const summary = `${totals.seeds} ${mode} seeds in ${totals.seconds.toFixed(1)} s (${(totals.seeds / totals.seconds).toFixed(1)} seeds/s): `
          + `${totals.orders} Flows (${totals.finished} finished), ${totals.transactions} transactions, ${totals.faults} store faults, `
          + `${totals.crashes} crashes, ${totals.pauses} pauses, ${(totals.virtualMs / 3_600_000).toFixed(2)} virtual hours`;
        t.diagnostic(summary);
        console.log(`perdure simulation: ${summary}; PERDURE_SIM_FIRST_SEED=${firstSeed} PERDURE_SIM_SEEDS=${count} replays this range`);
        // However few the seeds, the range must have exercised every fault kind.
        if (count >= defaultSeedCount) {
          assert.ok(totals.faults > 0 && totals.crashes > 0 && totals.pauses > 0, `seeds ${firstSeed} to ${chunkEnd} injected ${totals.faults} store faults, ${totals.crashes} crashes, ${totals.pauses} pauses: each kind must occur`);
        }
      }
      assert.deepEqual(failures, [], `${failures.length} seeds broke an invariant:\n${failures.slice(0, 20).join("\n")}`);
    });
  }

  void test(`a ${mode} seed determines its run: ${determinismSeeds} seeds run twice give identical traces`, async () => {
    for (let seed = firstSeed; seed < firstSeed + determinismSeeds; seed++) {
      const [first, second] = [await runSimulation(seed, mode), await runSimulation(seed, mode)];
      assert.equal(second.traceHash, first.traceHash, `seed ${seed} (${mode}) ran differently the second time; replay: ${replayCommand(testFile, seed)}`);
      assert.deepEqual(second.stats, first.stats);
    }
  });
}
