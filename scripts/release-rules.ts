/**
 * What a package must be before it is published, as rules over its
 * package.json and the file list `npm publish --dry-run` reports. Each rule
 * returns the problems it finds, in words that name the file or field;
 * `npm run check:release` applies them to every package, and
 * release-rules.test.ts checks each rule catches what it is for.
 */
import { builtinModules } from "node:module";
import { posix } from "node:path";

export interface PackageManifest {
  name?: string;
  version?: string;
  description?: string;
  license?: string;
  private?: boolean;
  type?: string;
  files?: string[];
  repository?: { type?: string; url?: string; directory?: string } | string;
  publishConfig?: { access?: string };
  engines?: { node?: string };
  bin?: Record<string, string> | string;
  exports?: Record<string, string | Record<string, string>>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/** The repository every package points to; `directory` is the package's folder in it. */
export const repositoryUrl = "git+https://github.com/perdure/perdure.git";

/** The export condition that picks TypeScript sources inside the repository; its targets are not shipped. */
export const sourceCondition = "perdure-source";

/**
 * Shipped JavaScript that is not compiled from TypeScript, so has no
 * declarations: the perdure dev web UI bundle, the starter's template and
 * the plain-JavaScript bins that check the Node version.
 */
const undeclaredJavaScript = [/^dist\/web\//, /^template\//, /^bin\//];

/** package.json fields every published package needs. */
export function manifestProblems(manifest: PackageManifest, workspace: string): string[] {
  const problems: string[] = [];
  const where = `${workspace}/package.json`;
  if (manifest.private === true) problems.push(`${where} is private`);
  for (const field of ["name", "version", "description", "license"] as const) {
    if (typeof manifest[field] !== "string" || manifest[field] === "") problems.push(`${where} has no ${field}`);
  }
  if (manifest.type !== "module") problems.push(`${where} must say "type": "module"`);
  if (!Array.isArray(manifest.files) || manifest.files.length === 0) problems.push(`${where} has no files list, so npm would ship every file`);
  const repository = typeof manifest.repository === "object" ? manifest.repository : undefined;
  if (repository?.type !== "git" || repository.url !== repositoryUrl || repository.directory !== workspace) {
    problems.push(`${where} repository must be { "type": "git", "url": "${repositoryUrl}", "directory": "${workspace}" }`);
  }
  if (manifest.publishConfig?.access !== "public") problems.push(`${where} needs "publishConfig": { "access": "public" }`);
  if (typeof manifest.engines?.node !== "string") problems.push(`${where} has no engines.node`);
  return problems;
}

/** Every `@perdure/*` dependency names exactly the version its package has: they are released together. */
export function workspaceVersionProblems(manifest: PackageManifest, workspace: string, versions: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  for (const [name, range] of [...Object.entries(manifest.dependencies ?? {}), ...Object.entries(manifest.peerDependencies ?? {})]) {
    const version = versions.get(name);
    if (version !== undefined && range !== version) problems.push(`${workspace}/package.json depends on ${name} ${range}, but ${name} is ${version}`);
  }
  return problems;
}

/** Tests, fixtures, build state and TypeScript sources must not ship (the starter's template is the user's app, test included). */
export function forbiddenFileProblems(name: string, files: readonly string[]): string[] {
  return files
    .filter((path) => !path.startsWith("template/"))
    .filter((path) => /(^|\/)[^/]*\.test\.|(^|\/)(test-fixtures|crash-fixtures)\/|\.tsbuildinfo$/.test(path) || (/\.(c|m)?ts$/.test(path) && !/\.d\.(c|m)?ts$/.test(path)))
    .map((path) => `${name} would ship ${path}, a test, fixture, build state or TypeScript source`);
}

/** Every shipped JavaScript module compiled from TypeScript has its declarations next to it. */
export function missingDeclarationProblems(name: string, files: readonly string[]): string[] {
  const shipped = new Set(files);
  return files
    .filter((path) => /\.(c|m)?js$/.test(path) && !undeclaredJavaScript.some((pattern) => pattern.test(path)))
    .filter((path) => !shipped.has(path.replace(/\.(c|m)?js$/, (extension) => `.d${extension.replace("js", "ts")}`)))
    .map((path) => `${name} would ship ${path} without its declarations (${path.replace(/js$/, "d.ts")})`);
}

/** Every file `exports` (other than the source condition) and `bin` name ships, with README.md and LICENSE; every export has types. */
export function missingExportProblems(manifest: PackageManifest, files: readonly string[]): string[] {
  const shipped = new Set(files);
  const problems: string[] = [];
  const named = new Set<string>(["README.md", "LICENSE"]);
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    if (typeof target === "string") {
      named.add(target);
      continue;
    }
    for (const [condition, path] of Object.entries(target)) if (condition !== sourceCondition) named.add(path);
    if (target.types === undefined) problems.push(`${String(manifest.name)} export ${subpath} has no "types" condition`);
  }
  for (const path of typeof manifest.bin === "string" ? [manifest.bin] : Object.values(manifest.bin ?? {})) named.add(path);
  for (const path of named) {
    if (!shipped.has(path.replace(/^\.\//, ""))) problems.push(`${String(manifest.name)} names ${path} but would not ship it`);
  }
  return problems;
}

/** The module specifiers a declaration file imports or re-exports. */
export function importedSpecifiers(declarations: string): string[] {
  const found = new Set<string>();
  // Doc comments hold example code; only statements count.
  const code = declarations.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  for (const match of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g)) found.add(match[1] as string);
  return [...found];
}

/** The package a bare specifier names: `@scope/name` or `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
}

/**
 * Every import of every shipped declaration file resolves: a relative one
 * to a shipped declaration file, a bare one to Node, the package itself, or
 * a dependency or peer dependency it declares.
 */
export function declarationImportProblems(manifest: PackageManifest, files: readonly string[], readDeclarations: (path: string) => string): string[] {
  const shipped = new Set(files);
  const allowedPackages = new Set([String(manifest.name), ...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
  const problems: string[] = [];
  for (const path of files.filter((file) => /\.d\.(c|m)?ts$/.test(file))) {
    for (const specifier of importedSpecifiers(readDeclarations(path))) {
      if (specifier.startsWith(".")) {
        const target = posix.normalize(posix.join(posix.dirname(path), specifier));
        const candidates = [target.replace(/\.(c|m)?(t|j)s$/, ".d.ts"), `${target}.d.ts`, `${target}/index.d.ts`];
        if (!candidates.some((candidate) => shipped.has(candidate))) problems.push(`${String(manifest.name)}: ${path} imports ${specifier}, which does not ship`);
      } else if (!specifier.startsWith("node:") && !builtinModules.includes(specifier) && !allowedPackages.has(packageOf(specifier))) {
        problems.push(`${String(manifest.name)}: ${path} imports ${specifier}, which is neither a dependency nor a peer dependency`);
      }
    }
  }
  return problems;
}
