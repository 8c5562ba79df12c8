#!/usr/bin/env node
// `npm create perdure@latest <folder>`: writes a starter app with one durable
// agent session, `perdure dev` as its start script, a test and a typecheck.
// Plain JavaScript that old Node versions parse, so the version check below
// can say what to do.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

function fail(message) {
  console.error(`create-perdure: ${message}`);
  process.exit(1);
}

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  // The same advice `perdure` gives: Node 24 from the npm registry, no root needed.
  const platform = process.platform === "win32" ? "win" : process.platform;
  const nodePackage = `node-${platform}-${process.arch}`;
  fail(`Node.js ${process.versions.node} is too old; Perdure needs 22.18.0 or later (24 recommended). Install Node 24 from the npm registry: npm install --prefix ~/.node24 ${nodePackage}@24 && export PATH=~/.node24/node_modules/${nodePackage}/bin:$PATH`);
}

const templateFolder = fileURLToPath(new URL("../template/", import.meta.url));
const ownPackage = JSON.parse(readFileSync(fileURLToPath(new URL("../package.json", import.meta.url)), "utf8"));
/** The Perdure packages the app depends on, at this starter's own version. */
const perdureRange = `^${ownPackage.version}`;
/** The other packages the template uses, at the ranges this repository tests it with (this package's devDependencies). */
const testedRange = (name) => ownPackage.devDependencies[name];

const argument = process.argv[2];
if (argument === undefined || argument === "--help" || argument === "-h") {
  console.log("Usage: npm create perdure@latest <folder>\n\nWrites a starter app with a durable agent session into <folder> (new or empty).");
  process.exit(argument === undefined ? 1 : 0);
}
const target = resolve(argument);
const name = basename(target).toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[._-]+/, "") || "perdure-app";
if (existsSync(target) && readdirSync(target).length > 0) fail(`${target} is not empty; pick a new folder`);
mkdirSync(target, { recursive: true });

const packageJson = {
  name,
  version: "0.1.0",
  private: true,
  type: "module",
  scripts: {
    start: "perdure dev",
    // `perdure check-node` exits with the advice on a Node.js too old to run the tests.
    test: "perdure check-node && node --test",
    typecheck: "tsc",
  },
  engines: { node: ">=22.18.0" },
  dependencies: {
    "@ai-sdk/anthropic": testedRange("@ai-sdk/anthropic"),
    "@ai-sdk/openai": testedRange("@ai-sdk/openai"),
    "@perdure/agents": perdureRange,
    "@perdure/engine": perdureRange,
    ai: testedRange("ai"),
    perdure: perdureRange,
    zod: testedRange("zod"),
  },
  devDependencies: {
    // @ai-sdk/provider's declarations import json-schema's types without depending on them.
    "@types/json-schema": testedRange("@types/json-schema"),
    "@types/node": testedRange("@types/node"),
    typescript: testedRange("typescript"),
  },
};
writeFileSync(join(target, "package.json"), `${JSON.stringify(packageJson, null, 2)}\n`);
for (const file of readdirSync(templateFolder)) {
  const text = readFileSync(join(templateFolder, file), "utf8").replaceAll("{{name}}", name);
  // npm leaves .gitignore files out of packages, so the template holds it as "gitignore".
  writeFileSync(join(target, file === "gitignore" ? ".gitignore" : file), text);
}
console.log(`Created ${name} in ${target}.\n\nNext:\n  cd ${argument}\n  npm install\n  npm start          # the web UI at http://127.0.0.1:4100\n  npm test\n  npm run typecheck`);
