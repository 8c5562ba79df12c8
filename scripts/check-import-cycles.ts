// Fails when an import circle exists inside a package: between two source files,
// or between two top-level folders of a package's source tree; and when a leaf
// folder (the agents package's contract/) imports another folder of its package. Type-only imports
// count too. Tests and test fixtures are left out: they may stand on every layer.
//
//   node scripts/check-import-cycles.ts            # every package
//   node scripts/check-import-cycles.ts --verbose  # also lists each package's folder order
//
// Imports are read with TypeScript's own pre-processor (no type-check), so the
// check takes about a second.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

const repositoryRoot = resolve(import.meta.dirname, "..");

/** A source tree checked on its own: its files are the graph's nodes. */
interface SourceTree {
  readonly name: string;
  readonly root: string;
}

const sourceTrees: readonly SourceTree[] = [
  ...readdirSync(join(repositoryRoot, "packages"))
    .filter((name) => existsSync(join(repositoryRoot, "packages", name, "src")))
    .map((name) => ({ name: `packages/${name}/src`, root: join(repositoryRoot, "packages", name, "src") })),
  { name: "packages/cli/web/src", root: join(repositoryRoot, "packages/cli/web/src") },
];

/** Folders that must stand on nothing else of their package (the engine's types are outside the package). */
const leafFolders: Readonly<Record<string, readonly string[]>> = {
  "packages/agents/src": ["contract"],
};

const sourceExtensions = [".ts", ".tsx"];

function isTestFile(path: string): boolean {
  return /\.test\.tsx?$/.test(path) || path.split(sep).some((segment) => segment.endsWith("fixtures"));
}

function listSourceFiles(folder: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules" && entry.name !== "dist") files.push(...listSourceFiles(path));
    } else if (sourceExtensions.some((extension) => entry.name.endsWith(extension)) && !entry.name.endsWith(".d.ts")) {
      if (!isTestFile(path)) files.push(path);
    }
  }
  return files;
}

/** Resolves a relative specifier to a file of the tree, or undefined when it leaves the tree. */
function resolveRelative(fromFile: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [
    base,
    base.replace(/\.js$/, ".ts"),
    base.replace(/\.js$/, ".tsx"),
    ...sourceExtensions.map((extension) => base + extension),
    ...sourceExtensions.map((extension) => join(base, `index${extension}`)),
  ];
  return candidates.find((candidate) => files.has(candidate));
}

function importsOf(file: string, files: ReadonlySet<string>): string[] {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  const targets = new Set<string>();
  for (const reference of info.importedFiles) {
    if (!reference.fileName.startsWith(".")) continue;
    const target = resolveRelative(file, reference.fileName, files);
    if (target !== undefined && target !== file) targets.add(target);
  }
  return [...targets];
}

/** Strongly connected components with more than one node (Tarjan), each as a list of nodes. */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let nextIndex = 0;
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, nextIndex);
    lowLink.set(node, nextIndex);
    nextIndex += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        lowLink.set(node, Math.min(lowLink.get(node)!, lowLink.get(target)!));
      } else if (onStack.has(target)) {
        lowLink.set(node, Math.min(lowLink.get(node)!, index.get(target)!));
      }
    }
    if (lowLink.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component);
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return components;
}

/** One shortest circle through the component's first node, as its nodes from that node back to it. */
function describeCircle(component: readonly string[], graph: ReadonlyMap<string, readonly string[]>): string[] {
  const members = new Set(component);
  const start = component[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let step = node; step !== start; step = previous.get(step)!) path.splice(1, 0, step);
        return [...path, start];
      }
      if (!previous.has(target) && target !== start) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [...component, start];
}

function topFolderOf(tree: SourceTree, file: string): string {
  const parts = relative(tree.root, file).split(sep);
  return parts.length === 1 ? "(root files)" : parts[0]!;
}

const problems: string[] = [];
const verbose = process.argv.includes("--verbose");
let fileCount = 0;
for (const tree of sourceTrees) {
  if (!existsSync(tree.root) || !statSync(tree.root).isDirectory()) continue;
  const files = listSourceFiles(tree.root);
  fileCount += files.length;
  const fileSet = new Set(files);
  const fileGraph = new Map(files.map((file) => [file, importsOf(file, fileSet)] as const));
  for (const component of findCycles(fileGraph)) {
    const circle = describeCircle(component, fileGraph).map((file) => relative(tree.root, file));
    problems.push(`${tree.name}: file circle ${circle.join(" -> ")}`);
  }
  const folderGraph = new Map<string, Set<string>>();
  const folderEdgeExample = new Map<string, string>();
  for (const [file, targets] of fileGraph) {
    const from = topFolderOf(tree, file);
    const edges = folderGraph.get(from) ?? new Set<string>();
    folderGraph.set(from, edges);
    for (const target of targets) {
      const to = topFolderOf(tree, target);
      if (to === from) continue;
      edges.add(to);
      const key = `${from}\u0000${to}`;
      if (!folderEdgeExample.has(key)) folderEdgeExample.set(key, `${relative(tree.root, file)} imports ${relative(tree.root, target)}`);
    }
  }
  for (const leaf of leafFolders[tree.name] ?? []) {
    for (const to of folderGraph.get(leaf) ?? []) {
      problems.push(`${tree.name}: ${leaf}/ is a leaf but imports ${to}/ (${folderEdgeExample.get(`${leaf}\u0000${to}`)})`);
    }
  }
  const folderLists = new Map([...folderGraph].map(([folder, edges]) => [folder, [...edges].sort()] as const));
  for (const component of findCycles(folderLists)) {
    const circle = describeCircle(component.sort(), folderLists);
    const edges = circle.slice(1).map((to, position) => `    ${folderEdgeExample.get(`${circle[position]}\u0000${to}`)}`);
    problems.push(`${tree.name}: folder circle ${circle.join(" -> ")} (folders in this knot: ${component.join(", ")})\n${edges.join("\n")}`);
  }
  if (verbose) {
    console.log(`${tree.name}: ${files.length} files`);
    for (const [folder, edges] of [...folderLists].sort()) console.log(`  ${folder} -> ${edges.join(", ") || "(nothing)"}`);
  }
}

if (problems.length > 0) {
  console.error(`Import circles (${problems.length}). Move the type both sides need into a small file (or down into contract/) that both import:\n`);
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
console.log(`No import circles in ${fileCount} source files.`);
