/**
 * Sums a V8 heap snapshot's objects by constructor (or node type), for
 * comparing the snapshots `run.ts --heap-snapshots` writes:
 *
 *   node bench/agents/dev-server-memory/heap-summary.ts a.heapsnapshot [b.heapsnapshot] [--top=25]
 *
 * With two files it prints the second minus the first, largest growth first.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface HeapSnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

function summarize(path: string): Map<string, { count: number; bytes: number }> {
  const file = JSON.parse(readFileSync(path, "utf8")) as HeapSnapshotFile;
  const fields = file.snapshot.meta.node_fields;
  const typeNames = file.snapshot.meta.node_types[0];
  const stride = fields.length;
  const typeOffset = fields.indexOf("type");
  const nameOffset = fields.indexOf("name");
  const sizeOffset = fields.indexOf("self_size");
  const totals = new Map<string, { count: number; bytes: number }>();
  for (let index = 0; index < file.nodes.length; index += stride) {
    const type = typeNames[file.nodes[index + typeOffset] ?? 0] ?? "?";
    const name = type === "object" || type === "closure" ? `${type}:${file.strings[file.nodes[index + nameOffset] ?? 0] ?? "?"}` : type;
    const entry = totals.get(name) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += file.nodes[index + sizeOffset] ?? 0;
    totals.set(name, entry);
  }
  return totals;
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: "string", default: "25" } } });
const [first, second] = positionals;
if (first === undefined) throw new Error("give one or two .heapsnapshot files");
const before = summarize(first);
const after = second === undefined ? undefined : summarize(second);
const rows = [...(after ?? before)].map(([name, entry]) => {
  const base = after === undefined ? { count: 0, bytes: 0 } : before.get(name) ?? { count: 0, bytes: 0 };
  return { name, count: entry.count - base.count, bytes: entry.bytes - base.bytes };
});
rows.sort((left, right) => right.bytes - left.bytes);
const total = (summary: Map<string, { bytes: number }>): number => [...summary.values()].reduce((sum, entry) => sum + entry.bytes, 0);
console.log(`total: ${(total(before) / 1048576).toFixed(1)} MiB${after === undefined ? "" : ` -> ${(total(after) / 1048576).toFixed(1)} MiB`}`);
for (const row of rows.slice(0, Number(values.top))) console.log(`${(row.bytes / 1048576).toFixed(2).padStart(9)} MiB ${String(row.count).padStart(9)}  ${row.name}`);
