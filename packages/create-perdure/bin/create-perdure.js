#!/usr/bin/env node
// `npm create perdure@latest <folder>`: writes a starter app with one durable
// agent session, `perdure dev` as its start script, and a test.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const templateFolder = fileURLToPath(new URL("../template/", import.meta.url));
const ownPackage = JSON.parse(readFileSync(fileURLToPath(new URL("../package.json", import.meta.url)), "utf8"));
/** The Perdure packages the app depends on, at this starter's own version. */
const perdureRange = `^${ownPackage.version}`;

function fail(message) {
  console.error(`create-perdure: ${message}`);
  process.exit(1);
}

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  fail(`Node.js ${process.versions.node} is too old; Perdure needs 22.18.0 or later (24 recommended)`);
}

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
    test: "node --test",
  },
  engines: { node: ">=22.18.0" },
  dependencies: {
    "@perdure/agents": perdureRange,
    "@perdure/engine": perdureRange,
    perdure: perdureRange,
  },
};
writeFileSync(join(target, "package.json"), `${JSON.stringify(packageJson, null, 2)}\n`);
for (const file of readdirSync(templateFolder)) {
  const text = readFileSync(join(templateFolder, file), "utf8").replaceAll("{{name}}", name);
  // npm leaves .gitignore files out of packages, so the template holds it as "gitignore".
  writeFileSync(join(target, file === "gitignore" ? ".gitignore" : file), text);
}
console.log(`Created ${name} in ${target}.\n\nNext:\n  cd ${argument}\n  npm install\n  npm start    # the web UI at http://127.0.0.1:4100\n  npm test`);
