/**
 * The private `CLAUDE_CONFIG_DIR` of each harness run: a folder only its
 * owner can open (mode 0700, as `mkdtemp` makes it), named after the Worker
 * process, removed when the run ends. A Worker killed mid-run leaves its
 * folder, which holds the run's transcript, so the first run of every
 * process removes the folders of processes that no longer exist.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const folderPrefix = "perdure-claude-code-";
const folderPattern = /^perdure-claude-code-(\d+)-/;

let staleFoldersRemoved: Promise<void> | undefined;

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes the config folders in `parent` whose process has ended; returns their names. */
export async function removeStaleClaudeConfigFolders(parent: string = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    const pid = Number(folderPattern.exec(name)?.[1] ?? Number.NaN);
    if (!Number.isSafeInteger(pid) || pid === process.pid || isProcessAlive(pid)) continue;
    await rm(join(parent, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/** A new config folder of this process, after the stale ones of ended processes are gone. */
export async function createClaudeConfigFolder(): Promise<string> {
  staleFoldersRemoved ??= removeStaleClaudeConfigFolders().then(
    () => undefined,
    (error: unknown) => console.warn("perdure agents-claude-agent-sdk: removing stale Claude Code config folders failed:", error),
  );
  await staleFoldersRemoved;
  return mkdtemp(join(tmpdir(), `${folderPrefix}${process.pid}-`));
}
