#!/usr/bin/env node
// The `perdure` command: checks the Node.js version, then runs the CLI.
import { checkNodeVersion } from "./check-node-version.js";

const problem = checkNodeVersion(process.versions.node);
if (problem !== null) {
  console.error(problem);
  process.exit(1);
}
// `perdure check-node`: the check above is all it does.
if (process.argv[2] === "check-node" && process.argv.length === 3) process.exit(0);
// Through the package's own exports: the built CLI when installed, its sources in the repository.
await import("perdure/cli");
