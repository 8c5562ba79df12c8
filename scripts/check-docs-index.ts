// Fails when a decision record in docs/decisions/ is missing from the index in
// docs/README.md, or the index links a record that does not exist.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const docs = resolve(import.meta.dirname, "..", "docs");
const records = readdirSync(join(docs, "decisions")).filter((name) => name.endsWith(".md"));
const index = readFileSync(join(docs, "README.md"), "utf8");
const linked = new Set([...index.matchAll(/\(decisions\/([^)#]+\.md)/g)].map((match) => match[1]!));
const missing = records.filter((name) => !linked.has(name));
const dangling = [...linked].filter((name) => !records.includes(name));
if (missing.length > 0 || dangling.length > 0) {
  for (const name of missing) console.error(`docs/README.md does not list decisions/${name}: add a row to its Decision records table`);
  for (const name of dangling) console.error(`docs/README.md links decisions/${name}, which does not exist`);
  process.exit(1);
}
console.log(`docs/README.md lists all ${records.length} decision records.`);
