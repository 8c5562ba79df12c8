import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { repositoryRoot } from "./test-fixtures/dev-server-process.ts";

const checkScript = fileURLToPath(new URL("../bin/check-node-version.js", import.meta.url));
const perdureBin = fileURLToPath(new URL("../bin/perdure.js", import.meta.url));
const createPerdureBin = fileURLToPath(new URL("../../create-perdure/bin/create-perdure.js", import.meta.url));

/** Runs `node <script> <args>` with `process.versions.node` faked before anything loads. */
function runAsNode(version: string, script: string, args: readonly string[] = []): { status: number | null; stderr: string; stdout: string } {
  const fake = `data:text/javascript,Object.defineProperty(process.versions, "node", { value: ${JSON.stringify(version)} });`;
  const result = spawnSync(process.execPath, ["--import", fake, script, ...args], { cwd: repositoryRoot, encoding: "utf8" });
  return { status: result.status, stderr: result.stderr, stdout: result.stdout };
}

describe("the Node.js version preflight", () => {
  it("refuses an older Node with one line naming the version found, the version needed and how to install Node 24", () => {
    for (const script of [checkScript, perdureBin]) {
      const result = runAsNode("20.20.2", script, ["--help"]);
      assert.equal(result.status, 1, result.stderr);
      assert.equal(result.stdout, "");
      const lines = result.stderr.trimEnd().split("\n");
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0] ?? "", /^perdure: Node\.js 20\.20\.2 is too old; Perdure needs 22\.18\.0 or later/);
      assert.match(lines[0] ?? "", /npm install --prefix ~\/\.node24 node-[a-z]+-[a-z0-9]+@24 && export PATH=~\/\.node24\/node_modules\/node-[a-z]+-[a-z0-9]+\/bin:\$PATH$/);
    }
    assert.equal(runAsNode("22.17.1", checkScript).status, 1);
  });

  it("perdure check-node says the same and exits 1 on an old Node, and exits 0 in silence on a new one", () => {
    const old = runAsNode("20.20.2", perdureBin, ["check-node"]);
    assert.equal(old.status, 1);
    assert.match(old.stderr, /^perdure: Node\.js 20\.20\.2 is too old; .*npm install --prefix ~\/\.node24 node-/);
    const fine = runAsNode("22.18.0", perdureBin, ["check-node"]);
    assert.deepEqual({ status: fine.status, stdout: fine.stdout, stderr: fine.stderr }, { status: 0, stdout: "", stderr: "" });
  });

  it("create-perdure on an old Node prints the same install commands and writes nothing", () => {
    const result = runAsNode("20.20.2", createPerdureBin, ["never-written"]);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /^create-perdure: Node\.js 20\.20\.2 is too old; Perdure needs 22\.18\.0 or later \(24 recommended\)\. Install Node 24 from the npm registry: npm install --prefix ~\/\.node24 node-[a-z]+-[a-z0-9]+@24 && export PATH=~\/\.node24\/node_modules\/node-[a-z]+-[a-z0-9]+\/bin:\$PATH\n$/);
    assert.equal(existsSync(`${repositoryRoot}/never-written`), false);
  });

  it("lets 22.18 and later through", () => {
    for (const version of ["22.18.0", "22.20.1", "24.0.0", "25.1.0"]) assert.equal(runAsNode(version, checkScript).status, 0, version);
    const help = runAsNode("24.1.0", perdureBin, ["--help"]);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /Usage: perdure <command>/);
  });

  it("runs first in every entry point: npm start, npm test, perdure, the examples and the bench", () => {
    const scriptsOf = (path: string): Record<string, string> => (JSON.parse(readFileSync(`${repositoryRoot}/${path}`, "utf8")) as { scripts: Record<string, string> }).scripts;
    const root = scriptsOf("package.json");
    for (const name of ["start", "test"]) assert.match(root[name] ?? "", /^node packages\/cli\/bin\/check-node-version\.js && /, name);
    assert.equal(root.perdure, "node packages/cli/bin/perdure.js");
    for (const path of ["examples/support-agent/package.json", "examples/counter/package.json", "bench/package.json"]) {
      for (const [name, command] of Object.entries(scriptsOf(path))) assert.match(command, /^node \.\.\/(\.\.\/)?packages\/cli\/bin\/check-node-version\.js && /, `${path} ${name}`);
    }
    const cli = JSON.parse(readFileSync(`${repositoryRoot}/packages/cli/package.json`, "utf8")) as { bin: Record<string, string> };
    assert.equal(cli.bin.perdure, "./bin/perdure.js");
  });
});
