/**
 * A new database file readable by its owner only. Conversations and the
 * resume-token secret live in it, so its folder is created 0700 and the file
 * 0600 whatever the umask; SQLite gives its `-wal` and `-shm` files the
 * database file's mode. Existing folders and files keep their modes.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";

/** Creates the folders of `path` (0700) and the file itself (0600) when missing. */
export function preparePrivateDatabaseFile(path: string): void {
  const folder = dirname(path);
  const firstCreated = mkdirSync(folder, { recursive: true, mode: 0o700 });
  if (firstCreated !== undefined) {
    // mkdir's mode passes through the umask; set each created folder's mode exactly.
    let current = firstCreated;
    chmodSync(current, 0o700);
    for (const part of relative(firstCreated, folder).split(sep).filter((segment) => segment !== "")) {
      current = join(current, part);
      chmodSync(current, 0o700);
    }
  }
  if (existsSync(path)) return;
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch (error) {
    // Another process created it first: it keeps the mode that process gave it.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return;
    throw error;
  }
  chmodSync(path, 0o600);
}
