/**
 * Random session programs with an oracle: each seed makes a session (turns
 * of model calls, parallel tool calls of every effect, approvals given and
 * refused, tools that refuse or crash, model calls that fail once or for
 * good), and the oracle computes from the program alone what the session
 * must end with. Each seed runs in real Worker child processes on a private
 * SQLite file with no kill (exact outcome demanded), twice more with a
 * SIGKILL at a seeded durable boundary (the contract's outcomes under a
 * kill), and once in this process on stores that fail a seeded share of
 * transactions. Tool runs are counted in an InvocationLog outside the store.
 *
 * By default it runs three seeds that move each day through 1 to 60 (what
 * `npm run test:soak` runs at once). PERDURE_SESSION_PROGRAM_SEEDS=<n> runs seeds 1 to n; PERDURE_SESSION_PROGRAM_SEED=<s>
 * replays one seed (PERDURE_SESSION_PROGRAM_KILL_AT=<a>,<b> pins its kills).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { generateSessionProgram } from "./generate-session-program.ts";
import { runSessionProgramInProcesses, runSessionProgramWithStoreFaults, type SessionProgramRunResult } from "./run-session-program.ts";
import { sessionProgramKillBoundaries, sessionProgramReplayCommand, sessionProgramSeeds } from "./session-program-seeds.ts";
import { programSize } from "./session-program.ts";

/** A kill boundary past every run's last one: the run goes without a kill. */
const noKill = 1_000_000;

interface SeedOutcome {
  seed: number;
  size: ReturnType<typeof programSize>;
  killAtBoundaries: number[];
  runs: SessionProgramRunResult[];
}

async function runSeed(seed: number): Promise<SeedOutcome> {
  const program = generateSessionProgram(seed);
  const [clean] = await runSessionProgramInProcesses(program, [noKill]);
  const killAtBoundaries = sessionProgramKillBoundaries(seed, clean?.boundariesReached ?? 1, 2);
  const killed = await runSessionProgramInProcesses(program, killAtBoundaries, { concurrency: 2 });
  const faulted = await runSessionProgramWithStoreFaults(program, { faultSeed: seed, transactionFaultRate: 0.15 });
  return { seed, size: programSize(program), killAtBoundaries, runs: [...(clean === undefined ? [] : [clean]), ...killed, faulted] };
}

function summarize(outcomes: readonly SeedOutcome[], durationMs: number): string {
  const runs = outcomes.flatMap((outcome) => outcome.runs);
  const sum = (pick: (outcome: SeedOutcome) => number): number => outcomes.reduce((total, outcome) => total + pick(outcome), 0);
  const faults: Record<string, number> = {};
  for (const run of runs) for (const [kind, count] of Object.entries(run.faultsInjected)) faults[kind] = (faults[kind] ?? 0) + count;
  const killedAt = new Map<string, number>();
  for (const run of runs) if (run.killedAt !== undefined) killedAt.set(run.killedAt.split(" ")[0]!, (killedAt.get(run.killedAt.split(" ")[0]!) ?? 0) + 1);
  return [
    `session programs: ${outcomes.length} seeds, ${runs.length} runs in ${(durationMs / 1000).toFixed(1)} s`,
    `programs: ${sum((outcome) => outcome.size.turns)} turns, ${sum((outcome) => outcome.size.modelCalls)} model calls, ${sum((outcome) => outcome.size.toolCalls)} tool calls (${sum((outcome) => outcome.size.approvals)} approvals, ${sum((outcome) => outcome.size.singleAttemptCalls)} single-attempt); largest ${Math.max(...outcomes.map((outcome) => outcome.size.toolCalls))} tool calls`,
    `kills: ${runs.filter((run) => run.killedAt !== undefined).length} injected (${[...killedAt].map(([name, count]) => `${name} ${count}`).join(", ")}); ${runs.filter((run) => run.mode !== "faulted" && run.killedAt === undefined).length} runs without a kill`,
    `store faults: ${Object.values(faults).reduce((total, count) => total + count, 0)} injected (${Object.entries(faults).filter(([, count]) => count > 0).map(([kind, count]) => `${kind} ${count}`).join(", ")}); faults stopped early in ${runs.filter((run) => run.faultsStopped).length} runs`,
    `allowed outcomes other than planned: ${runs.flatMap((run) => run.degradedCalls).length} calls, ${runs.flatMap((run) => run.degradedTurns).length} turns`,
    `violations: ${runs.reduce((total, run) => total + run.violations.length, 0)}`,
  ].join("\n");
}

function describeFailures(outcomes: readonly SeedOutcome[]): string {
  return outcomes.flatMap((outcome) => outcome.runs.filter((run) => run.violations.length > 0).map((run) => {
    const where = run.mode === "faulted" ? "under store faults" : run.killedAt === undefined ? "without a kill" : `killed at boundary ${run.killAtBoundary} (${run.killedAt})`;
    return `seed ${outcome.seed} ${where}:\n  ${run.violations.join("\n  ")}\n  replay: ${sessionProgramReplayCommand(outcome.seed, run.mode === "killed" ? [run.killAtBoundary ?? noKill] : outcome.killAtBoundaries)}`;
  })).join("\n\n");
}

void test("seeded session programs end as their oracle computes: exactly without a kill, within the contract's outcomes after a SIGKILL at a seeded durable boundary or under store faults, and no single-attempt tool ever runs twice", { timeout: 900_000 }, async (t) => {
  const startedAt = performance.now();
  const seeds = sessionProgramSeeds();
  const outcomes: SeedOutcome[] = [];
  const queue = [...seeds];
  const lane = async (): Promise<void> => {
    for (let seed = queue.shift(); seed !== undefined; seed = queue.shift()) outcomes.push(await runSeed(seed));
  };
  await Promise.all([lane(), lane()]);
  outcomes.sort((left, right) => left.seed - right.seed);
  t.diagnostic(summarize(outcomes, performance.now() - startedAt));

  const runs = outcomes.flatMap((outcome) => outcome.runs);
  assert.equal(runs.length, seeds.length * 4, "each seed ran clean, twice killed and once under faults");
  assert.ok(runs.filter((run) => run.mode === "exact").length >= seeds.length, "every seed had a run that demanded its exact outcome");
  assert.equal(describeFailures(outcomes), "", "every run ended as its oracle computed");
});
