/**
 * Migrations that have shipped never change: `schema_migrations` records
 * only their names, so an edit would leave databases migrated before it
 * different from new ones. Later migrations are built from earlier ones'
 * text (`rewritten-function.ts`), which catches an edit only to the exact
 * text they replace. This test holds each migration's SQL by its SHA-256
 * (the first 16 hex digits): an edit to any of them fails it. A new
 * migration adds its line here once it is final.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { postgresMigrations } from "./migrations.ts";

const shipped: readonly (readonly [name: string, sha256: string])[] = [
  ["0001_initial", "6358f89995dbe946"],
  ["0002_one_trip_functions", "69e9bd2848236fb5"],
  ["0003_lean_commit_step", "3f66d34b75352477"],
  ["0004_commit_step_handover", "53553267bdc546c2"],
  ["0005_commit_step_compact_handover", "72f474cc7d73f32c"],
  ["0006_commit_step_handover_in_place", "71eb76f54c17277d"],
  ["0007_append_stream", "2edffee9726ac540"],
  ["0008_claim_locks_and_loads", "fbb1379f3df91426"],
  ["0009_commit_step_waits_and_publishes", "c301508953f9dd1f"],
  ["0010_claim_reads_loads", "8b4a08448633fb8c"],
  ["0011_commit_step_chain_place", "cc1c94d2fd3db911"],
  ["0012_commit_functions_generic_plans", "146bbd2140cd8d2f"],
  ["0013_append_streams", "de695390c56482ca"],
  ["0014_publish_rpc", "60ca8392d43a608b"],
  ["0015_due_timer_wins", "95b4712aba8cefed"],
  ["0016_append_streams_by_run", "9f758681b9fe02ff"],
  ["0017_commit_step_attribute_writes", "dd7ce9c61b78be76"],
  ["0018_plain_attributes_index", "59bf966c943109be"],
  ["0019_claim_reports_more", "a574511d6aeb82de"],
  ["0020_commit_streams", "c3b39eb37fa0391c"],
  ["0021_stream_batches_and_rpc_wakes", "e8927b748d27f867"],
  ["0022_publish_rpc_claiming", "a269643082e82f74"],
  ["0023_leaner_claims_and_commits", "092759913c08792c"],
];

void test("every shipped migration's SQL is as it shipped", () => {
  const actual = postgresMigrations.map((migration) => [migration.name, createHash("sha256").update(migration.sql).digest("hex").slice(0, 16)] as const);
  assert.deepEqual(actual.slice(0, shipped.length), shipped, "a shipped migration's SQL changed: add a new migration instead");
  assert.deepEqual(actual.slice(shipped.length).map(([name]) => name), [], "a migration without its line here: add it once it is final");
});
