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

function runModuleScript(script: string, workingDirectory: string): { status: number | null; stdout: string; stderr: string } {
  const child = spawnSync(process.execPath, ["--conditions=perdure-source", "--input-type=module", "--eval", script], { cwd: workingDirectory, encoding: "utf8" });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

void test("importing the mcp entry where @modelcontextprotocol/sdk is not installed fails with Cannot find package '@modelcontextprotocol/sdk'", (t) => {
  // A copy of the package sources outside this repository, where @perdure/engine resolves and the MCP SDK does not.
  const directory = mkdtempSync(join(tmpdir(), "perdure-agents-without-mcp-"));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  cpSync(agentsSourceDirectory, join(directory, "src"), { recursive: true });
  writeFileSync(join(directory, "package.json"), JSON.stringify({ name: "agents-without-mcp", type: "module" }));
  mkdirSync(join(directory, "node_modules", "@perdure"), { recursive: true });
  symlinkSync(engineDirectory, join(directory, "node_modules", "@perdure", "engine"), "dir");

  const result = runModuleScript(`await import(${JSON.stringify(join(directory, "src", "mcp", "index.ts"))});`, directory);

  assert.notEqual(result.status, 0);
  assert.match(result.stderr, /Cannot find package '@modelcontextprotocol\/sdk'/);
});

void test("the root and stepwise entries do not load @modelcontextprotocol/sdk, and the mcp entry does", () => {
  const script = (entry: string): string => `
    import { registerHooks } from "node:module";
    const sdkSpecifiers = [];
    registerHooks({
      resolve(specifier, context, nextResolve) {
        if (specifier.startsWith("@modelcontextprotocol/sdk")) sdkSpecifiers.push(specifier);
        return nextResolve(specifier, context);
      },
    });
    await import(${JSON.stringify(entry)});
    process.stdout.write(JSON.stringify(sdkSpecifiers));
  `;
  const root = runModuleScript(script("@perdure/agents"), agentsPackageDirectory);
  const stepwise = runModuleScript(script("@perdure/agents/stepwise"), agentsPackageDirectory);
  const mcp = runModuleScript(script("@perdure/agents/mcp"), agentsPackageDirectory);

  assert.equal(root.status, 0, root.stderr);
  assert.deepEqual(JSON.parse(root.stdout), []);
  assert.equal(stepwise.status, 0, stepwise.stderr);
  assert.deepEqual(JSON.parse(stepwise.stdout), []);
  assert.equal(mcp.status, 0, mcp.stderr);
  assert.ok((JSON.parse(mcp.stdout) as string[]).includes("@modelcontextprotocol/sdk/client/index.js"));
});
