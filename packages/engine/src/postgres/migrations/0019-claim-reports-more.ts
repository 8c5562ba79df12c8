/**
 * Migration 0019: `perdure_claim_plain` once more (0014's body, built from
 * its text), telling whether claimable tasks were left: its reply has
 * `more`, true when it saw more claimable tasks of the Worker's Flow types
 * than it claimed (those it skipped for a busy lock or a locked row
 * included), false when it claimed every one it saw.
 *
 * A Worker whose Step commit claimed as many tasks as it asked for used to
 * wake every Worker, its own loop and the other processes (a NOTIFY), in
 * case more were waiting. In an agent turn that is nearly always a look
 * that finds nothing: about 1.6 claims and 1.6 NOTIFY statements a turn.
 * With `more: false` the Worker leaves the wake-up out. A task queued by
 * another transaction after the count wakes Workers through that
 * transaction's own commit, as before.
 *
 * The count is the one 0014 already makes to tell skipped rows, with one
 * more row (`LIMIT p_limit + 1`); `skipped` keeps its meaning.
 * docs/decisions/2026-12-07-claims-tell-what-is-left.md
 */
import type { Migration } from "./migration.ts";
import { publishRpcMigration } from "./0014-publish-rpc.ts";
import { rewrittenFunction } from "./rewritten-function.ts";

const header = "CREATE OR REPLACE FUNCTION {schema}.perdure_claim_plain(p_worker_id text, p_flow_types text[], p_catalog jsonb, p_limit integer, p_now bigint)";
const countEnd = "LIMIT p_limit) candidates;";
const reply = "RETURN jsonb_build_object('claims', v_claims, 'stopped', v_stopped, 'skipped', v_visible > v_locked);";

/** 0014's `perdure_claim_plain` definition with its count and reply changed; throws if 0014's text is not as expected. */
function claimPlainReportingMore(): string {
  return rewrittenFunction({
    migration: "migration 0019",
    source: "0014's perdure_claim_plain",
    sql: publishRpcMigration.sql,
    header,
    replacements: [
      { what: "0014's count of candidates", find: countEnd, replace: "LIMIT p_limit + 1) candidates;" },
      { what: "0014's reply", find: reply, replace: "RETURN jsonb_build_object('claims', v_claims, 'stopped', v_stopped, 'skipped', least(v_visible, p_limit) > v_locked, 'more', v_visible > v_count);" },
    ],
  });
}

export const claimReportsMoreMigration: Migration = {
  name: "0019_claim_reports_more",
  sql: `\n${claimPlainReportingMore()}\n`,
};
