/**
 * A `SqliteStore.open` that fails leaves no file descriptor open: neither
 * when another process holds the write lock past the busy timeout, nor when
 * the file is not a database, nor when the path cannot be opened at all. A
 * server that retries an open in a loop must not run out of descriptors, and
 * a failed open must not keep a mount busy.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { SqliteStore, type SqliteStoreOptions } from "./sqlite-store.ts";

/** Descriptors this process has open now. */
function openDescriptorCount(): number {
  return readdirSync("/proc/self/fd").length;
}

/** Opens `options` `times` times; each open must fail. */
function failOpens(options: SqliteStoreOptions, times: number, expected: RegExp): void {
  for (let index = 0; index < times; index += 1) {
    assert.throws(() => SqliteStore.open(options), expected);
  }
}

/** A child process that holds SQLite's write lock on `path` until it is killed. */
async function holdWriteLock(path: string): Promise<ChildProcessWithoutNullStreams> {
  const script = `
    const { DatabaseSync } = require("node:sqlite");
    const database = new DatabaseSync(${JSON.stringify(path)});
    database.exec("BEGIN IMMEDIATE");
    process.stdout.write("locked\\n");
    setInterval(() => {}, 1 << 30);
  `;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("locked")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the lock holder exited with ${String(code)} before it took the lock`)));
  });
  return child;
}

async function stopChild(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGKILL");
  await exited;
}

describe("a failed SqliteStore.open", () => {
  it("leaks no file descriptor while another process holds the write lock (50 opens, and one with default options)", { timeout: 300_000 }, async () => {
    const folder = mkdtempSync(join(tmpdir(), "perdure-open-failure-"));
    const path = join(folder, "locked.db");
    // The file exists with its schema and in WAL mode before another process locks it.
    await SqliteStore.open({ path, durability: "process-crash-safe" }).close();
    const holder = await holdWriteLock(path);
    try {
      const before = openDescriptorCount();
      failOpens({ path, durability: "process-crash-safe", busyTimeoutMs: 10 }, 50, /database is locked/);
      // Default options wait the default busy timeout once.
      failOpens({ path }, 1, /database is locked/);
      assert.equal(openDescriptorCount(), before, "descriptors left open by failed opens");
    } finally {
      await stopChild(holder);
      rmSync(folder, { recursive: true, force: true });
    }
    // Once the lock is gone, the same file opens and works.
    const reopenedFolder = mkdtempSync(join(tmpdir(), "perdure-open-failure-"));
    try {
      const store = SqliteStore.open({ path: join(reopenedFolder, "fresh.db") });
      await store.close();
    } finally {
      rmSync(reopenedFolder, { recursive: true, force: true });
    }
  });

  it("leaks no file descriptor when the file is not a database (50 opens)", () => {
    const folder = mkdtempSync(join(tmpdir(), "perdure-open-failure-"));
    const path = join(folder, "not-a-database.db");
    writeFileSync(path, "this is a text file, not an SQLite database\n".repeat(200), { mode: 0o600 });
    try {
      const before = openDescriptorCount();
      failOpens({ path }, 50, /file is not a database/);
      assert.equal(openDescriptorCount(), before, "descriptors left open by failed opens");
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("leaks no file descriptor when the path cannot be opened as a file (50 opens)", () => {
    const folder = mkdtempSync(join(tmpdir(), "perdure-open-failure-"));
    const path = join(folder, "a-folder.db");
    mkdirSync(path);
    try {
      const before = openDescriptorCount();
      failOpens({ path }, 50, /unable to open database file/);
      assert.equal(openDescriptorCount(), before, "descriptors left open by failed opens");
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
