import assert from "node:assert/strict";
import { test } from "node:test";
import { generateSessionProgram } from "./generate-session-program.ts";
import { programToolCalls } from "./session-program.ts";
import { sessionProgramKillBoundaries, sessionProgramSeeds } from "./session-program-seeds.ts";

void test("a seed always makes the same session program, and different seeds make different ones", () => {
  assert.deepEqual(generateSessionProgram(17), generateSessionProgram(17));
  assert.notDeepEqual(generateSessionProgram(17), generateSessionProgram(18));
});

void test("the first 40 seeds cover every effect, both approval answers, every tool behaviour and both kinds of model failure", () => {
  const programs = Array.from({ length: 40 }, (_unused, index) => generateSessionProgram(index + 1));
  const calls = programs.flatMap(programToolCalls);
  assert.deepEqual(new Set(calls.map((call) => call.effect)), new Set(["read", "idempotent_write", "non_idempotent_write", "unclassified"]));
  assert.deepEqual(new Set(calls.map((call) => call.approval?.approved)), new Set([undefined, true, false]));
  assert.deepEqual(new Set(calls.map((call) => `${call.behavior.kind}${call.behavior.kind === "succeed" ? call.behavior.transientFailures : ""}`)), new Set(["succeed0", "succeed1", "tool-error", "crash"]));
  const modelCalls = programs.flatMap((program) => program.turns.flatMap((turn) => turn.modelCalls));
  assert.ok(modelCalls.some((call) => call.alwaysFails) && modelCalls.some((call) => call.transientFailures === 1));
  assert.ok(calls.every((call) => call.toolCallId.startsWith("turn-")), "tool call IDs follow ScriptedAgentRunner's");
});

void test("the default seeds move each day through the soak's seeds 1 to 60, three a day, and cover all of them in 20 days", () => {
  const day = 86_400_000;
  assert.deepEqual(sessionProgramSeeds({}, 0), [1, 2, 3]);
  assert.deepEqual(sessionProgramSeeds({}, 19 * day + 5), [58, 59, 60]);
  assert.deepEqual(sessionProgramSeeds({}, 20 * day), [1, 2, 3]);
  const covered = new Set(Array.from({ length: 20 }, (_unused, index) => sessionProgramSeeds({}, (1000 + index) * day)).flat());
  assert.deepEqual([...covered].sort((left, right) => left - right), Array.from({ length: 60 }, (_unused, index) => index + 1));
});

void test("a program refuses a seed outside 32 bits, and the seed variables refuse values that are not positive integers", () => {
  assert.throws(() => generateSessionProgram(-1), /session program seed -1 is invalid/);
  assert.throws(() => sessionProgramSeeds({ PERDURE_SESSION_PROGRAM_SEEDS: "many" }), /PERDURE_SESSION_PROGRAM_SEEDS="many" is invalid/);
  assert.deepEqual(sessionProgramSeeds({ PERDURE_SESSION_PROGRAM_SEED: "99" }), [99]);
  assert.deepEqual(sessionProgramSeeds({ PERDURE_SESSION_PROGRAM_SEEDS: "3" }), [1, 2, 3]);
  assert.deepEqual(sessionProgramKillBoundaries(5, 40, 2, { PERDURE_SESSION_PROGRAM_KILL_AT: "7, 12" }), [7, 12]);
  const seeded = sessionProgramKillBoundaries(5, 40, 2, {});
  assert.deepEqual(seeded, sessionProgramKillBoundaries(5, 40, 2, {}));
  assert.ok(seeded.every((boundary) => boundary >= 1 && boundary <= 40));
});
