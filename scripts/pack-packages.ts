/**
 * Packs every package of this repository into tarballs, as `npm publish`
 * would build and pack them: each package's `prepack` runs first (it builds
 * the package), then `npm pack`. Until the packages are on the npm registry,
 * this is how to get them:
 *
 *   npm run pack:packages                   # into ./packed/
 *   npm run pack:packages -- /some/folder   # elsewhere
 *
 * then, in your app, `npm install /some/folder/perdure-engine-0.1.0.tgz …`.
 * The consumer test and `npm run check:release` use `packPackages`.
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Every package that is published, in dependency order. */
export const publishedWorkspaces = [
  "packages/engine",
  "packages/agents",
  "packages/agents-vercel-ai",
  "packages/agents-openai-agents",
  "packages/agents-mastra",
  "packages/agents-claude-agent-sdk",
  "packages/cli",
  "packages/create-perdure",
] as const;

export interface PackedFile {
  path: string;
  size: number;
}

/** What `npm pack --json` says of one package, with the tarball's absolute path. */
export interface PackedPackage {
  workspace: string;
  name: string;
  version: string;
  /** The tarball's absolute path. */
  filename: string;
  /** Bytes of the tarball. */
  size: number;
  unpackedSize: number;
  files: PackedFile[];
}

export function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): string {
  const result = spawnSync(command, args, { cwd: options.cwd, env: options.env ?? process.env, encoding: "utf8", timeout: 600_000, maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} in ${options.cwd} failed (${String(result.status ?? result.signal)}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** {@link run} without blocking the event loop, so several commands can run at once. */
export function runAsync(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string> {
  return new Promise((resolveRun, reject) => {
    execFile(command, [...args], { cwd: options.cwd, env: options.env ?? process.env, encoding: "utf8", timeout: 600_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) resolveRun(stdout);
      else reject(new Error(`${command} ${args.join(" ")} in ${options.cwd} failed (${String(error.code ?? error.signal)}):\n${stdout}\n${stderr}`));
    });
  });
}

/** Builds (through each package's prepack) and packs `workspaces` into `destination`. */
export function packPackages(destination: string, workspaces: readonly string[] = publishedWorkspaces): PackedPackage[] {
  mkdirSync(destination, { recursive: true });
  return workspaces.map((workspace) => {
    // The prepack's own output stays out of pack's JSON: run it first, then pack without scripts.
    run("npm", ["run", "prepack", "--if-present", "--workspace", workspace], { cwd: repositoryRoot });
    const [packed] = JSON.parse(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", destination, "--workspace", workspace], { cwd: repositoryRoot })) as Omit<PackedPackage, "workspace">[];
    if (packed === undefined) throw new Error(`npm pack printed nothing for ${workspace}`);
    return { ...packed, workspace, filename: join(destination, packed.filename) };
  });
}

export function describePacked(packed: PackedPackage): string {
  return `${packed.name}@${packed.version}: ${packed.files.length} files, ${(packed.size / 1024).toFixed(0)} kB packed, ${(packed.unpackedSize / 1024).toFixed(0)} kB unpacked (${packed.filename})`;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const destination = resolve(process.argv[2] ?? join(repositoryRoot, "packed"));
  for (const packed of packPackages(destination)) console.log(describePacked(packed));
  console.log(`\nInstall them in your app with: npm install ${destination}/<tarball>.tgz …`);
}
