import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { SqliteStore } from "./sqlite-store.ts";

function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

describe("SQLite store files", () => {
  it("creates missing folders 0700 and the database, WAL and SHM files 0600 even under umask 0", async () => {
    const root = mkdtempSync(join(tmpdir(), "perdure-modes-"));
    const previousUmask = process.umask(0);
    try {
      const path = join(root, "a", "b", "dev.db");
      const store = SqliteStore.open({ path });
      // A write creates the WAL and SHM files.
      await store.transaction(async () => undefined);
      assert.equal(modeOf(join(root, "a")), 0o700);
      assert.equal(modeOf(join(root, "a", "b")), 0o700);
      for (const file of [path, `${path}-wal`, `${path}-shm`]) assert.equal(modeOf(file), 0o600, file);
      await store.close();
    } finally {
      process.umask(previousUmask);
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("leaves an existing folder and file with the modes their owner chose", async () => {
    const root = mkdtempSync(join(tmpdir(), "perdure-modes-"));
    try {
      chmodSync(root, 0o750);
      const path = join(root, "shared.db");
      writeFileSync(path, "");
      chmodSync(path, 0o640);
      const store = SqliteStore.open({ path });
      await store.close();
      assert.equal(modeOf(root), 0o750);
      assert.equal(modeOf(path), 0o640);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
