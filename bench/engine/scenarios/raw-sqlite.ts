import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "../support.ts";
import { median } from "../support.ts";

type Synchronous = "NORMAL" | "FULL";

interface LoopResult {
  transactions: number;
  msPerTransaction: number;
}

/** Runs `transaction` up to `count` times or until `budgetMs` passes, whichever is first. */
function timeLoop(count: number, budgetMs: number, transaction: (index: number) => void): LoopResult {
  const startedAt = performance.now();
  let done = 0;
  while (done < count) {
    transaction(done);
    done++;
    // Checking the clock every 16 transactions keeps the check itself out of the number.
    if (done % 16 === 0 && performance.now() - startedAt > budgetMs) break;
  }
  return { transactions: done, msPerTransaction: (performance.now() - startedAt) / done };
}

/**
 * The floor under every engine number: a one-row INSERT + COMMIT in WAL mode
 * on this machine, with the same pragmas the SqliteStore uses, plus an
 * empty BEGIN IMMEDIATE/COMMIT (what a read-only engine transaction costs).
 */
function measureSynchronous(synchronous: Synchronous, count: number, budgetMs: number): { insertCommit: LoopResult; emptyTransaction: LoopResult } {
  const folder = mkdtempSync(join(tmpdir(), "perdure-bench-raw-"));
  const database = new DatabaseSync(join(folder, "raw.db"));
  try {
    database.exec("PRAGMA journal_mode = WAL");
    database.exec(`PRAGMA synchronous = ${synchronous}`);
    database.exec("CREATE TABLE rows (id INTEGER PRIMARY KEY, value TEXT NOT NULL)");
    const insert = database.prepare("INSERT INTO rows (value) VALUES (?)");
    const insertOne = (index: number): void => {
      database.exec("BEGIN IMMEDIATE");
      insert.run(`value ${index}`);
      database.exec("COMMIT");
    };
    timeLoop(Math.min(200, count), budgetMs, insertOne);
    const insertCommit = timeLoop(count, budgetMs, insertOne);
    const emptyTransaction = timeLoop(count, budgetMs, () => {
      database.exec("BEGIN IMMEDIATE");
      database.exec("COMMIT");
    });
    return { insertCommit, emptyTransaction };
  } finally {
    database.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

export async function runRawSqliteBaseline(settings: BenchmarkSettings): Promise<ScenarioResult> {
  const measurements: Measurement[] = [];
  const details: Record<string, unknown> = {};
  const repetitions = settings.quick ? 1 : 3;
  for (const synchronous of ["NORMAL", "FULL"] as const) {
    const count = synchronous === "NORMAL" ? (settings.quick ? 2000 : 10_000) : (settings.quick ? 300 : 2000);
    const budgetMs = settings.quick ? 700 : 2500;
    const runs = Array.from({ length: repetitions }, () => measureSynchronous(synchronous, count, budgetMs));
    details[synchronous] = runs;
    measurements.push({
      scenario: "raw-sqlite",
      metric: `INSERT+COMMIT, WAL synchronous=${synchronous}`,
      value: median(runs.map((run) => run.insertCommit.msPerTransaction)),
      unit: "ms/commit",
      note: `${runs[0]?.insertCommit.transactions ?? 0} commits per run`,
    });
    measurements.push({
      scenario: "raw-sqlite",
      metric: `empty BEGIN IMMEDIATE+COMMIT, synchronous=${synchronous}`,
      value: median(runs.map((run) => run.emptyTransaction.msPerTransaction)),
      unit: "ms/txn",
    });
  }
  return { measurements, details };
}
