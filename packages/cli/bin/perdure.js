#!/usr/bin/env node
// The `perdure` command: checks the Node.js version, then runs the CLI.
import { checkNodeVersion } from "./check-node-version.js";

const problem = checkNodeVersion(process.versions.node);
if (problem !== null) {
  console.error(problem);
  process.exit(1);
}
// Through the package's own exports: the built CLI when installed, its sources in the repository.
await import("perdure/cli");
