import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const agentsSourceDirectory = dirname(dirname(fileURLToPath(import.meta.url)));
const agentsPackageDirectory = dirname(agentsSourceDirectory);
const engineDirectory = realpathSync(join(agentsPackageDirectory, "..", "engine"));

/** Runs an ES module script in a fresh Node process. */
function runModuleScript(script: string, workingDirectory: string): { status: number | null; stdout: string; stderr: string } {
  const child = spawnSync(process.execPath, ["--input-type=module", "--eval", script], { cwd: workingDirectory, encoding: "utf8" });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

void test("importing the ai-sdk entry where the ai package is not installed fails with Cannot find package 'ai'", (t) => {
  // A copy of the package sources outside this repository, where @perdure/engine resolves and ai does not.
  const directory = mkdtempSync(join(tmpdir(), "perdure-agents-without-ai-"));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  cpSync(agentsSourceDirectory, join(directory, "src"), { recursive: true });
  writeFileSync(join(directory, "package.json"), JSON.stringify({ name: "agents-without-ai", type: "module" }));
  mkdirSync(join(directory, "node_modules", "@perdure"), { recursive: true });
  symlinkSync(engineDirectory, join(directory, "node_modules", "@perdure", "engine"), "dir");

  const result = runModuleScript(`await import(${JSON.stringify(join(directory, "src", "ai-sdk", "index.ts"))});`, directory);

  assert.notEqual(result.status, 0);
  assert.match(result.stderr, /Cannot find package 'ai'/);
});

void test("the root entry does not load the ai package, and the ai-sdk entry does", () => {
  const script = (entry: string): string => `
    import { registerHooks } from "node:module";
    const aiSpecifiers = [];
    registerHooks({
      resolve(specifier, context, nextResolve) {
        if (specifier === "ai" || specifier.startsWith("ai/")) aiSpecifiers.push(specifier);
        return nextResolve(specifier, context);
      },
    });
    await import(${JSON.stringify(entry)});
    process.stdout.write(JSON.stringify(aiSpecifiers));
  `;

  const root = runModuleScript(script("@perdure/agents"), agentsPackageDirectory);
  const aiSdk = runModuleScript(script("@perdure/agents/ai-sdk"), agentsPackageDirectory);

  assert.equal(root.status, 0, root.stderr);
  assert.deepEqual(JSON.parse(root.stdout), []);
  assert.equal(aiSdk.status, 0, aiSdk.stderr);
  assert.deepEqual([...new Set(JSON.parse(aiSdk.stdout) as string[])], ["ai"]);
});
