/**
 * Sums a V8 `.cpuprofile` (from `node --cpu-prof`) by self time: the top
 * functions, the packages or folders they live in, and (with --callers=NAME)
 * who calls a function, by the self time under it; with --total=REGEX, the
 * total time (self and below, each function once per sample) of functions
 * whose `name file:line` label matches. Used to find where the
 * Node CPU of an agent turn goes (issue 40).
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/peers-agents/cpu-per-turn.ts perdure-sqlite 16 10
 *   node bench/engine/cpuprofile-summary.ts /tmp/prof/CPU.*.cpuprofile [--top=40] [--callers=stringify] [--per=1600] [--total=REGEX]
 *
 * `--per=N` divides every time by N (the turns of the run) and prints ms per
 * turn. Several profiles are summed.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface CallFrame { functionName: string; url: string; lineNumber: number; columnNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[]; parent?: number }
interface CpuProfile { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string" }, callers: { type: "string" }, per: { type: "string" }, depth: { type: "string" }, total: { type: "string" } },
});
if (positionals.length === 0) throw new Error("give one or more .cpuprofile files");
const top = Number(values.top ?? "40");
const per = Number(values.per ?? "1");
const callerDepth = Number(values.depth ?? "4");
if (!Number.isFinite(top) || top <= 0) throw new Error(`--top=${values.top} must be a positive number`);
if (!Number.isFinite(per) || per <= 0) throw new Error(`--per=${values.per} must be a positive number`);

/** Where a script lives, shortened: a package (`pg`, `@perdure/engine src/worker`), a Node internal, or the script. */
function placeOf(url: string): string {
  if (url === "") return "(native / V8)";
  if (url.startsWith("node:")) return `node:${url.slice(5).split("/")[0]}`;
  const path = url.replace(/^file:\/\//, "");
  const modules = path.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const rest = path.slice(modules + 14).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const packages = path.indexOf("/packages/");
  if (packages >= 0) {
    const rest = path.slice(packages + 10).split("/");
    return `@perdure/${rest[0]} ${rest.slice(1, -1).join("/")}`;
  }
  const bench = path.indexOf("/bench/");
  if (bench >= 0) return `bench/${path.slice(bench + 7).split("/").slice(0, -1).join("/")}`;
  return path;
}

function frameLabel(frame: CallFrame): string {
  const file = frame.url.split("/").pop() ?? "";
  return `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
}

const selfByFunction = new Map<string, number>();
const selfByPlace = new Map<string, number>();
const underCaller = new Map<string, number>();
const totalByFunction = new Map<string, number>();
let total = 0;

for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) byId.set(node.id, node);
  for (const node of profile.nodes) for (const child of node.children ?? []) byId.get(child)!.parent = node.id;
  const selfUs = new Map<number, number>();
  for (let index = 0; index < profile.samples.length; index++) {
    const delta = profile.timeDeltas[index + 1] ?? 0;
    selfUs.set(profile.samples[index]!, (selfUs.get(profile.samples[index]!) ?? 0) + delta);
  }
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const frame = node.callFrame;
    if (frame.functionName === "(idle)") continue;
    total += us;
    const label = frameLabel(frame);
    selfByFunction.set(label, (selfByFunction.get(label) ?? 0) + us);
    const place = frame.url === "" ? `(${frame.functionName})` : placeOf(frame.url);
    selfByPlace.set(place, (selfByPlace.get(place) ?? 0) + us);
    const seen = new Set<string>();
    for (let ancestor: ProfileNode | undefined = node; ancestor !== undefined; ancestor = ancestor.parent === undefined ? undefined : byId.get(ancestor.parent)) {
      const ancestorLabel = frameLabel(ancestor.callFrame);
      if (seen.has(ancestorLabel)) continue;
      seen.add(ancestorLabel);
      totalByFunction.set(ancestorLabel, (totalByFunction.get(ancestorLabel) ?? 0) + us);
    }
    if (values.callers !== undefined && frame.functionName.includes(values.callers)) {
      let parent = node.parent === undefined ? undefined : byId.get(node.parent);
      const chain: string[] = [];
      while (parent !== undefined && chain.length < callerDepth) {
        chain.push(frameLabel(parent.callFrame));
        parent = parent.parent === undefined ? undefined : byId.get(parent.parent);
      }
      const key = `${label}  <-  ${chain.join("  <-  ")}`;
      underCaller.set(key, (underCaller.get(key) ?? 0) + us);
    }
  }
}

const unit = per === 1 ? "ms" : "ms/turn";
function print(title: string, map: Map<string, number>, limit: number): void {
  console.log(`\n${title} (${unit}, share of ${(total / 1000 / per).toFixed(2)} ${unit} sampled, idle excluded)`);
  const rows = [...map.entries()].sort((left, right) => right[1] - left[1]).slice(0, limit);
  for (const [key, us] of rows) console.log(`${(us / 1000 / per).toFixed(3).padStart(10)}  ${((100 * us) / total).toFixed(1).padStart(5)} %  ${key}`);
}
print("self time by package / folder", selfByPlace, top);
print("self time by function", selfByFunction, top);
if (values.total !== undefined) {
  const pattern = new RegExp(values.total);
  print(`total time (self and below) of functions whose label matches /${values.total}/`, new Map([...totalByFunction].filter(([label]) => pattern.test(label))), top);
}
if (values.callers !== undefined) print(`callers of functions named like "${values.callers}"`, underCaller, top);
