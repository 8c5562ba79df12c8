import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, it, type TestContext } from "node:test";
import { SqliteStore } from "./sqlite-store.ts";

function folderFor(t: TestContext): string {
  const folder = mkdtempSync(join(tmpdir(), "perdure-page-size-"));
  t.after(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

function pageSizeOf(path: string): number {
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    return (database.prepare("PRAGMA page_size").get() as { page_size: number }).page_size;
  } finally {
    database.close();
  }
}

describe("SQLite page size", () => {
  it("creates a database file with 2 KiB pages, so that a COMMIT writes half the bytes a dirtied page took", async (t) => {
    const path = join(folderFor(t), "engine.db");
    const store = SqliteStore.open({ path, durability: "process-crash-safe" });
    await store.transaction(async (transaction) => transaction.writeAttribute("flow", "Value", "", "1"));
    await store.close();
    assert.equal(pageSizeOf(path), 2048);
  });

  it("leaves an existing file's page size as it is", async (t) => {
    const path = join(folderFor(t), "engine.db");
    const existing = new DatabaseSync(path);
    existing.exec("PRAGMA page_size = 4096");
    existing.exec("PRAGMA journal_mode = WAL");
    existing.exec("CREATE TABLE earlier (id INTEGER PRIMARY KEY)");
    existing.close();
    const store = SqliteStore.open({ path, durability: "process-crash-safe" });
    await store.transaction(async (transaction) => transaction.writeAttribute("flow", "Value", "", "1"));
    assert.equal(await store.transaction(async (transaction) => transaction.readAttribute("flow", "Value", "")), "1");
    await store.close();
    assert.equal(pageSizeOf(path), 4096);
  });
});
