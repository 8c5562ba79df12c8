/**
 * `npm run check:release`: builds every published package through its
 * prepack, asks `npm publish --dry-run` what it would ship, and fails when a
 * package would ship tests or sources, JavaScript without declarations, or
 * miss a file its exports or bin name, when a shipped declaration imports
 * something that would not resolve, or when a package.json lacks a field a
 * release needs (release-rules.ts). Nothing is published.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { publishedWorkspaces, repositoryRoot, run, type PackedFile } from "./pack-packages.ts";
import {
  declarationImportProblems,
  forbiddenFileProblems,
  manifestProblems,
  missingDeclarationProblems,
  missingExportProblems,
  workspaceVersionProblems,
  type PackageManifest,
} from "./release-rules.ts";

interface DryRun {
  name: string;
  version: string;
  size: number;
  unpackedSize: number;
  files: PackedFile[];
}

const manifests = new Map(publishedWorkspaces.map((workspace) => [workspace, JSON.parse(readFileSync(join(repositoryRoot, workspace, "package.json"), "utf8")) as PackageManifest]));
const versions = new Map([...manifests.values()].map((manifest) => [String(manifest.name), String(manifest.version)]));
const problems: string[] = [];
for (const [workspace, manifest] of manifests) {
  problems.push(...manifestProblems(manifest, workspace), ...workspaceVersionProblems(manifest, workspace, versions));
  run("npm", ["run", "prepack", "--if-present", "--workspace", workspace], { cwd: repositoryRoot });
  // No registry login is needed: --dry-run stops before the upload.
  const output = JSON.parse(run("npm", ["publish", "--dry-run", "--json", "--ignore-scripts", "--workspace", workspace], { cwd: repositoryRoot })) as Record<string, DryRun>;
  const dryRun = output[String(manifest.name)];
  if (dryRun === undefined) {
    problems.push(`npm publish --dry-run said nothing of ${String(manifest.name)}`);
    continue;
  }
  const files = dryRun.files.map((file) => file.path);
  problems.push(
    ...forbiddenFileProblems(dryRun.name, files),
    ...missingDeclarationProblems(dryRun.name, files),
    ...missingExportProblems(manifest, files),
    ...declarationImportProblems(manifest, files, (path) => readFileSync(join(repositoryRoot, workspace, path), "utf8")),
  );
  console.log(`${dryRun.name}@${dryRun.version}: ${files.length} files, ${(dryRun.size / 1024).toFixed(0)} kB packed, ${(dryRun.unpackedSize / 1024).toFixed(0)} kB unpacked`);
}
if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
console.log(`all ${manifests.size} packages are ready to publish`);
