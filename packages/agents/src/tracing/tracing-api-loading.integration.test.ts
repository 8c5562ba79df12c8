import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const probePath = fileURLToPath(new URL("./test-fixtures/api-loading-probe.ts", import.meta.url));

interface ProbeResult {
  resolvedSpecifiers: string[];
  turnError: string | null;
  messageTexts: string[];
}

/** Runs the probe in a fresh Node process, which has loaded no module yet. */
function runProbe(mode: "disabled" | "enabled" | "absent" | "root-only"): ProbeResult & { output: string } {
  const child = spawnSync(process.execPath, ["--conditions=perdure-source", probePath, mode], { encoding: "utf8", timeout: 60_000 });
  assert.equal(child.status, 0, `probe ${mode} failed:\n${child.stderr}`);
  const resultLine = child.stdout.split("\n").find((line) => line.startsWith("probe result: "));
  assert.ok(resultLine !== undefined, `probe ${mode} printed no result:\n${child.stdout}`);
  return { ...(JSON.parse(resultLine.slice("probe result: ".length)) as ProbeResult), output: child.stdout + child.stderr };
}

const turnTexts = ["Where is order 7?", "", "shipped", "Answer: shipped"];

void test("a session with tracing.isEnabled false runs a turn without ever resolving @opentelemetry/api", () => {
  const disabled = runProbe("disabled");
  assert.deepEqual(disabled.resolvedSpecifiers, []);
  assert.equal(disabled.turnError, null);
  assert.deepEqual(disabled.messageTexts, turnTexts);
});

void test("importing the root entry loads no @opentelemetry module; a session with default tracing loads the API on its first Step", () => {
  assert.deepEqual(runProbe("root-only").resolvedSpecifiers, []);
  const enabled = runProbe("enabled");
  assert.deepEqual(enabled.resolvedSpecifiers, ["@opentelemetry/api"]);
  assert.deepEqual(enabled.messageTexts, turnTexts);
});

void test("without @opentelemetry/api installed, a session with default tracing runs its turn as without tracing", () => {
  const absent = runProbe("absent");
  assert.deepEqual(absent.resolvedSpecifiers, ["@opentelemetry/api"]);
  assert.equal(absent.turnError, null);
  assert.deepEqual(absent.messageTexts, turnTexts);
  assert.doesNotMatch(absent.output, /perdure agents tracing: .* failed/);
  assert.equal(absent.output.match(/@opentelemetry\/api is not installed; sessions emit no spans/g)?.length, 1);
});
