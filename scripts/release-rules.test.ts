import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { publishedWorkspaces, repositoryRoot } from "./pack-packages.ts";
import {
  declarationImportProblems,
  forbiddenFileProblems,
  importedSpecifiers,
  manifestProblems,
  missingDeclarationProblems,
  missingExportProblems,
  repositoryUrl,
  workspaceVersionProblems,
  type PackageManifest,
} from "./release-rules.ts";

const readyManifest: PackageManifest = {
  name: "@perdure/example",
  version: "0.1.0",
  description: "An example.",
  license: "Apache-2.0",
  type: "module",
  files: ["dist", "README.md", "LICENSE"],
  repository: { type: "git", url: repositoryUrl, directory: "packages/example" },
  publishConfig: { access: "public" },
  engines: { node: ">=22.18.0" },
  exports: { ".": { "perdure-source": "./src/index.ts", types: "./dist/index.d.ts", default: "./dist/index.js" } },
  dependencies: { "@perdure/engine": "0.1.0", ajv: "^8.0.0" },
  peerDependencies: { pg: "^8.0.0" },
};

describe("release rules", () => {
  it("every published package's package.json has what a release needs, and @perdure dependencies at the released versions", () => {
    const manifests = publishedWorkspaces.map((workspace) => [workspace, JSON.parse(readFileSync(join(repositoryRoot, workspace, "package.json"), "utf8")) as PackageManifest] as const);
    const versions = new Map(manifests.map(([, manifest]) => [String(manifest.name), String(manifest.version)]));
    for (const [workspace, manifest] of manifests) {
      assert.deepEqual([...manifestProblems(manifest, workspace), ...workspaceVersionProblems(manifest, workspace, versions)], [], workspace);
    }
  });

  it("names a missing repository, publishConfig, files list or engines, and a private package", () => {
    assert.deepEqual(manifestProblems(readyManifest, "packages/example"), []);
    const bare: PackageManifest = { ...readyManifest };
    delete bare.repository;
    delete bare.publishConfig;
    delete bare.files;
    delete bare.engines;
    assert.deepEqual(manifestProblems({ ...bare, private: true }, "packages/example"), [
      "packages/example/package.json is private",
      "packages/example/package.json has no files list, so npm would ship every file",
      `packages/example/package.json repository must be { "type": "git", "url": "${repositoryUrl}", "directory": "packages/example" }`,
      'packages/example/package.json needs "publishConfig": { "access": "public" }',
      "packages/example/package.json has no engines.node",
    ]);
    assert.equal(manifestProblems({ ...readyManifest, repository: { type: "git", url: repositoryUrl, directory: "packages/other" } }, "packages/example").length, 1);
  });

  it("names a @perdure dependency on another version than the one released with it", () => {
    const versions = new Map([["@perdure/engine", "0.2.0"]]);
    assert.deepEqual(workspaceVersionProblems(readyManifest, "packages/example", versions), ["packages/example/package.json depends on @perdure/engine 0.1.0, but @perdure/engine is 0.2.0"]);
  });

  it("refuses tests, fixtures, build state and TypeScript sources, but not the starter's template or declarations", () => {
    const files = ["dist/index.js", "dist/index.d.ts", "dist/index.d.ts.map", "dist/store.test.js", "dist/test-fixtures/agent.js", "dist/sim/crash-fixtures/kill.js", "tsconfig.tsbuildinfo", "src/index.ts", "template/agent.test.ts", "template/model.ts"];
    assert.deepEqual(forbiddenFileProblems("p", files).map((problem) => /^p would ship (\S+), a test/.exec(problem)?.[1]), ["dist/store.test.js", "dist/test-fixtures/agent.js", "dist/sim/crash-fixtures/kill.js", "tsconfig.tsbuildinfo", "src/index.ts"]);
  });

  it("refuses compiled JavaScript without its declarations, but not the web UI bundle, bins or templates", () => {
    const files = ["dist/index.js", "dist/index.d.ts", "dist/store.js", "dist/web/assets/index-a1b2.js", "bin/perdure.js", "template/x.js"];
    assert.deepEqual(missingDeclarationProblems("p", files), ["p would ship dist/store.js without its declarations (dist/store.d.ts)"]);
  });

  it("refuses exports and bins that name files that would not ship, and exports without types; the source condition is not shipped", () => {
    const shipped = ["README.md", "LICENSE", "dist/index.js", "dist/index.d.ts", "package.json"];
    assert.deepEqual(missingExportProblems(readyManifest, shipped), []);
    const manifest: PackageManifest = { ...readyManifest, bin: { example: "./bin/example.js" }, exports: { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" }, "./extra": { default: "./dist/extra.js" } } };
    assert.deepEqual(missingExportProblems(manifest, shipped.filter((path) => path !== "LICENSE")), [
      '@perdure/example export ./extra has no "types" condition',
      "@perdure/example names LICENSE but would not ship it",
      "@perdure/example names ./dist/extra.js but would not ship it",
      "@perdure/example names ./bin/example.js but would not ship it",
    ]);
  });

  it("reads imports, re-exports and import types of declarations, not examples in comments", () => {
    const declarations = '/**\n * @example\n * import { z } from "zod";\n */\nimport type { A } from "./a.ts";\nexport * from "./b.js";\nexport declare const c: import("@perdure/engine").Client;\nimport "./side-effect.js";\n// import { d } from "./d.js";\n';
    assert.deepEqual(importedSpecifiers(declarations), ["./a.ts", "./b.js", "@perdure/engine", "./side-effect.js"]);
  });

  it("refuses a declaration import that would not resolve: an unshipped file or an undeclared package", () => {
    const files = ["dist/index.d.ts", "dist/a.d.ts", "dist/sub/index.d.ts"];
    const sources: Record<string, string> = {
      "dist/index.d.ts": 'export * from "./a.ts";\nexport * from "./sub";\nexport * from "./gone.js";\nimport type { Ajv } from "ajv";\nimport type { Pool } from "pg";\nimport type { X } from "lodash/fp";\nimport type { EventEmitter } from "node:events";\nimport type { Readable } from "stream";\nimport type { Y } from "@perdure/example/testing";',
      "dist/a.d.ts": "export declare const a: number;",
      "dist/sub/index.d.ts": 'export * from "../a.js";',
    };
    assert.deepEqual(declarationImportProblems(readyManifest, files, (path) => sources[path] ?? ""), [
      "@perdure/example: dist/index.d.ts imports ./gone.js, which does not ship",
      "@perdure/example: dist/index.d.ts imports lodash/fp, which is neither a dependency nor a peer dependency",
    ]);
  });
});
