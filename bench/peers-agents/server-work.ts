/**
 * What the PostgreSQL server does for one agent turn, counted, not timed:
 * WAL bytes and records by relation and record type (full-page images
 * apart), the commits that waited for a WAL flush, rows inserted, updated
 * (HOT or not) and deleted by table, and the server time per statement
 * (pg_stat_statements, nested statements of the functions included).
 * Runs the bench's turn (perdure-agent.ts) on a private cluster.
 *
 *   scripts/start-test-postgres.sh   # then add to its postgresql.conf and restart:
 *     shared_preload_libraries = 'pg_stat_statements'
 *     pg_stat_statements.track = all
 *     pg_stat_statements.track_planning = on
 *   PERDURE_TEST_DATABASE_URL=... PERDURE_TEST_POSTGRES_DIR=... PERDURE_TEST_POSTGRES_BINDIR=... \
 *     node bench/peers-agents/server-work.ts [perdure|dbos] [sessions] [turns] [--checkpoint]
 *
 * `--checkpoint` runs a CHECKPOINT just before the counted turns, so every
 * page they touch first writes a full-page image: the worst case, which a
 * busy server meets once per checkpoint interval. Without it the counts
 * carry whatever full-page images the timing of the last checkpoint gives.
 * The cluster must serve nothing else meanwhile: the WAL and the
 * statistics are the whole server's.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import pg from "pg";
import { openPerdureAgentPostgres } from "./perdure-agent.ts";
import { measureSessionsThroughput, type AgentTurnSystem } from "./turn-workload.ts";

const url = process.env["PERDURE_TEST_DATABASE_URL"];
const folder = process.env["PERDURE_TEST_POSTGRES_DIR"];
const bindir = process.env["PERDURE_TEST_POSTGRES_BINDIR"] ?? "/usr/lib/postgresql/15/bin";
if (url === undefined || folder === undefined) throw new Error("set PERDURE_TEST_DATABASE_URL and PERDURE_TEST_POSTGRES_DIR (scripts/start-test-postgres.sh prints both)");
const flags = process.argv.slice(2).filter((argument) => argument.startsWith("--"));
const [systemName = "perdure", sessionsText = "1", turnsText = "20"] = process.argv.slice(2).filter((argument) => !argument.startsWith("--"));
if (systemName !== "perdure" && systemName !== "dbos") throw new Error(`unknown system ${systemName}: use perdure or dbos`);
const sessions = Number(sessionsText);
const turnsPerSession = Number(turnsText);
if (!Number.isSafeInteger(sessions) || sessions <= 0 || !Number.isSafeInteger(turnsPerSession) || turnsPerSession <= 0) throw new Error(`sessions ${sessionsText} and turns ${turnsText} must be positive integers`);
const checkpoint = flags.includes("--checkpoint");

const admin = new pg.Client({ connectionString: url });
await admin.connect();
const one = async <T>(sql: string, values: unknown[] = []): Promise<T> => (await admin.query(sql, values)).rows[0] as T;
const hasStatements = (await admin.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'")).rowCount === 1;

interface TableCounts { ins: number; upd: number; hot: number; del: number; seq: number; seqRows: number; idx: number }
async function tableCounts(): Promise<Map<string, TableCounts>> {
  // A busy backend reports its counts at most once a second; an idle pooled connection, 10 s after its last transaction.
  await new Promise((resolve) => setTimeout(resolve, 11_000));
  await admin.query("SELECT pg_stat_clear_snapshot()");
  const rows = (await admin.query<{ name: string; ins: string; upd: string; hot: string; del: string; seq: string; seq_rows: string; idx: string }>(
    `SELECT relname AS name, n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot, n_tup_del::text AS del,
       seq_scan::text AS seq, seq_tup_read::text AS seq_rows, coalesce(idx_scan, 0)::text AS idx FROM pg_stat_user_tables`,
  )).rows;
  const counts = new Map<string, TableCounts>();
  for (const row of rows) {
    const previous = counts.get(row.name) ?? { ins: 0, upd: 0, hot: 0, del: 0, seq: 0, seqRows: 0, idx: 0 };
    counts.set(row.name, {
      ins: previous.ins + Number(row.ins), upd: previous.upd + Number(row.upd), hot: previous.hot + Number(row.hot), del: previous.del + Number(row.del),
      seq: previous.seq + Number(row.seq), seqRows: previous.seqRows + Number(row.seq_rows), idx: previous.idx + Number(row.idx),
    });
  }
  return counts;
}
interface ServerCounters { lsn: string; xid: bigint; commits: number; walRecords: number; walFpi: number; walBytes: number; walSync: number; walWrite: number }
async function serverCounters(): Promise<ServerCounters> {
  const row = await one<{ lsn: string; xid: string; commits: string; records: string; fpi: string; bytes: string; sync: string; write: string }>(
    `SELECT pg_current_wal_insert_lsn()::text AS lsn, txid_snapshot_xmax(txid_current_snapshot())::text AS xid,
            (SELECT xact_commit::text FROM pg_stat_database WHERE datname = current_database()) AS commits,
            w.wal_records::text AS records, w.wal_fpi::text AS fpi, w.wal_bytes::text AS bytes, w.wal_sync::text AS sync, w.wal_write::text AS write
       FROM pg_stat_wal w`,
  );
  return { lsn: row.lsn, xid: BigInt(row.xid), commits: Number(row.commits), walRecords: Number(row.records), walFpi: Number(row.fpi), walBytes: Number(row.bytes), walSync: Number(row.sync), walWrite: Number(row.write) };
}

const system: AgentTurnSystem = systemName === "dbos" ? await (await import("./dbos-agent.ts")).openDbosAgent(url, 20) : await openPerdureAgentPostgres(url, 16);
let turns = 0;
try {
  await measureSessionsThroughput(system, Math.min(sessions, 4), 3);
  if (checkpoint) await admin.query("CHECKPOINT");
  if (hasStatements) await admin.query("SELECT pg_stat_statements_reset()");
  const tablesBefore = await tableCounts();
  const before = await serverCounters();
  await measureSessionsThroughput(system, sessions, turnsPerSession);
  turns = sessions * turnsPerSession;
  // tableCounts waits for the backends to flush their statistics, which the WAL counters need too.
  const tablesAfter = await tableCounts();
  const after = await serverCounters();
  const per = (value: number): string => (value / turns).toFixed(2);
  console.log(`${system.name}: ${turns} turns (${sessions} session(s) × ${turnsPerSession}), checkpoint before: ${checkpoint ? "yes" : "no"}, load ${(await import("node:os")).loadavg()[0]!.toFixed(1)}`);

  console.log("\nrows per turn by table: inserted, updated (of which HOT), deleted; sequential scans (rows they read), index scans");
  for (const [name, counts] of [...tablesAfter].sort()) {
    const was = tablesBefore.get(name) ?? { ins: 0, upd: 0, hot: 0, del: 0, seq: 0, seqRows: 0, idx: 0 };
    const delta = { ins: counts.ins - was.ins, upd: counts.upd - was.upd, hot: counts.hot - was.hot, del: counts.del - was.del, seq: counts.seq - was.seq, seqRows: counts.seqRows - was.seqRows, idx: counts.idx - was.idx };
    if (delta.ins + delta.upd + delta.del + delta.seq + delta.idx === 0) continue;
    console.log(`  ${name.padEnd(28)} ins ${per(delta.ins).padStart(6)}  upd ${per(delta.upd).padStart(6)} (HOT ${per(delta.hot).padStart(6)})  del ${per(delta.del).padStart(6)}  seq ${per(delta.seq).padStart(6)} (${per(delta.seqRows).padStart(7)} rows)  idx ${per(delta.idx).padStart(6)}`);
  }

  // WAL by relation and record type, from the WAL itself.
  const relations = new Map<string, string>();
  for (const row of (await admin.query<{ node: string; name: string }>("SELECT pg_relation_filenode(c.oid)::text AS node, n.nspname || '.' || c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE pg_relation_filenode(c.oid) IS NOT NULL")).rows) {
    relations.set(row.node, row.name.replace(/^perdure_bench_[0-9a-f]+\./, "").replace(/^dbos_bench_[0-9a-z_]+\./, "dbos."));
  }
  const dump = execFileSync(join(bindir, "pg_waldump"), ["-p", join(folder, "data", "pg_wal"), "-s", before.lsn, "-e", after.lsn], { encoding: "utf8", maxBuffer: 1 << 30 });
  const byKey = new Map<string, { records: number; bytes: number; fpiBytes: number; fpi: number }>();
  for (const line of dump.split("\n")) {
    const match = /^rmgr: (\S+)\s+len \(rec\/tot\):\s*(\d+)\/\s*(\d+), tx:\s*\d+, lsn: \S+, prev \S+, desc: (\S+)(.*)$/.exec(line);
    if (match === null) continue;
    const [, rmgr, recordLength, totalLength, kind, rest] = match;
    const relation = /rel \d+\/\d+\/(\d+)/.exec(rest!);
    const name = relation === null ? "-" : (relations.get(relation[1]!) ?? `filenode ${relation[1]}`);
    const fpiCount = (rest!.match(/FPW/g) ?? []).length;
    const key = `${name} ${rmgr}/${kind}`;
    const entry = byKey.get(key) ?? { records: 0, bytes: 0, fpiBytes: 0, fpi: 0 };
    entry.records += 1;
    entry.bytes += Number(totalLength);
    entry.fpiBytes += Number(totalLength) - Number(recordLength);
    entry.fpi += fpiCount;
    byKey.set(key, entry);
  }
  const walTotal = [...byKey.values()].reduce((sum, entry) => sum + entry.bytes, 0);
  const commitRecords = [...byKey].filter(([key]) => key.endsWith("Transaction/COMMIT")).reduce((sum, [, entry]) => sum + entry.records, 0);
  const fpiTotal = [...byKey.values()].reduce((sum, entry) => sum + entry.fpi, 0);
  const recordTotal = [...byKey.values()].reduce((sum, entry) => sum + entry.records, 0);
  console.log(`per turn: write transactions ${per(Number(after.xid - before.xid))}, commit records ${per(commitRecords)}, WAL ${per(walTotal)} B in ${per(recordTotal)} records, full-page images ${per(fpiTotal)}`);
  // The statistics views lag (a backend reports at most every second, an idle one later): indicative only.
  console.log(`  (pg_stat_wal, indicative: WAL syncs ${per(after.walSync - before.walSync)}, commits counted ${per(after.commits - before.commits)})`);
  console.log(`\nWAL per turn by relation and record (pg_waldump; ${per(walTotal)} B): records, bytes, of which full-page images (count, bytes)`);
  const byRelation = new Map<string, { records: number; bytes: number; fpiBytes: number; fpi: number }>();
  for (const [key, entry] of byKey) {
    const relation = key.split(" ")[0]!;
    const total = byRelation.get(relation) ?? { records: 0, bytes: 0, fpiBytes: 0, fpi: 0 };
    total.records += entry.records; total.bytes += entry.bytes; total.fpiBytes += entry.fpiBytes; total.fpi += entry.fpi;
    byRelation.set(relation, total);
  }
  for (const [relation, entry] of [...byRelation].sort((left, right) => right[1].bytes - left[1].bytes)) {
    console.log(`  ${relation.padEnd(40)} ${per(entry.records).padStart(7)} rec ${per(entry.bytes).padStart(9)} B  FPI ${per(entry.fpi).padStart(5)} / ${per(entry.fpiBytes).padStart(8)} B`);
  }
  console.log("\n  by relation and record type:");
  for (const [key, entry] of [...byKey].sort((left, right) => right[1].bytes - left[1].bytes).slice(0, 40)) {
    console.log(`  ${key.padEnd(60)} ${per(entry.records).padStart(7)} rec ${per(entry.bytes).padStart(9)} B  FPI ${per(entry.fpiBytes).padStart(8)} B`);
  }

  if (hasStatements) {
    const rows = (await admin.query<{ query: string; toplevel: boolean; calls: string; exec: number; plan: number; plans: string; wal: string; fpi: string; rows: string }>(
      `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, toplevel, calls::text, total_exec_time AS exec, total_plan_time AS plan, plans::text,
              wal_bytes::text AS wal, wal_fpi::text AS fpi, rows::text
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        ORDER BY total_exec_time + total_plan_time DESC LIMIT 45`,
    )).rows;
    const topTotal = rows.filter((row) => row.toplevel).reduce((sum, row) => sum + row.exec + row.plan, 0);
    console.log(`\nstatements (pg_stat_statements; top-level total ${(topTotal / turns).toFixed(2)} ms per turn, wall time in the server, lock waits included):`);
    console.log("  top calls/turn  exec ms/turn  plan ms/turn  plans/turn  WAL B/turn  query");
    for (const row of rows) {
      console.log(`  ${row.toplevel ? "T" : "n"} ${per(Number(row.calls)).padStart(8)}  ${(row.exec / turns).toFixed(3).padStart(11)}  ${(row.plan / turns).toFixed(3).padStart(11)}  ${per(Number(row.plans)).padStart(9)}  ${per(Number(row.wal)).padStart(9)}  ${row.query.replace(/"perdure_bench_[0-9a-f]+"\./g, "").slice(0, 110)}`);
    }
  }
} finally {
  await system.close();
  await admin.end();
}
