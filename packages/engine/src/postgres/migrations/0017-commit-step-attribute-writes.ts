/**
 * Migration 0017: `perdure_commit_step` once more (0011's body, 0012's
 * generic plans), writing each Attribute by update first:
 *
 * - a value equal to the stored one is not written again (no new row
 *   version, no WAL);
 * - a changed value updates the row in place;
 * - a missing row is inserted with a plain `INSERT`.
 *
 * 0011 wrote each as `INSERT … ON CONFLICT DO UPDATE`. That writes a
 * row-lock record to the WAL besides every update, and a speculative
 * insertion with its confirmation record for every new row.
 *
 * The rows end as 0011 leaves them, one write at a time and in order, so a
 * name and key written twice keeps the last. A plain insert cannot meet a
 * concurrent insert of the same key: every writer of a Flow's Attributes
 * holds the Flow row's lock (this function's fence or handover, the general
 * path's transaction, the Flow's start).
 *
 * The body is 0011's text with that one statement replaced, so it cannot
 * drift from what shipped. The replacement is checked when this module
 * loads. docs/decisions/2026-12-07-asynchronous-claims-and-heartbeats.md
 * (the measurements).
 */
import type { Migration } from "./migration.ts";
import { commitStepChainPlaceMigration } from "./0011-commit-step-chain-place.ts";
import { rewrittenFunction } from "./rewritten-function.ts";

const upsert = `INSERT INTO {schema}.attributes (flow_id, name, key, value) VALUES (v_flow_id, v_write ->> 0, v_write ->> 1, v_write ->> 2)
            ON CONFLICT (flow_id, name, key) DO UPDATE SET value = excluded.value;`;

const updateFirst = `WITH updated AS (
            UPDATE {schema}.attributes SET value = v_write ->> 2
              WHERE flow_id = v_flow_id AND name = v_write ->> 0 AND key = v_write ->> 1 AND value IS DISTINCT FROM v_write ->> 2
              RETURNING 1)
          INSERT INTO {schema}.attributes (flow_id, name, key, value)
            SELECT v_flow_id, v_write ->> 0, v_write ->> 1, v_write ->> 2
            WHERE NOT EXISTS (SELECT 1 FROM updated)
              AND NOT EXISTS (SELECT 1 FROM {schema}.attributes a WHERE a.flow_id = v_flow_id AND a.name = v_write ->> 0 AND a.key = v_write ->> 1);`;

const header = "CREATE OR REPLACE FUNCTION {schema}.perdure_commit_step(p jsonb, p_catalog jsonb)\nRETURNS jsonb LANGUAGE plpgsql AS $function$";

/** 0011's `perdure_commit_step` definition with generic plans and one statement replaced; throws if 0011's text is not as expected. */
function commitStepWithUpdateFirst(): string {
  return rewrittenFunction({
    migration: "migration 0017",
    source: "0011's perdure_commit_step",
    sql: commitStepChainPlaceMigration.sql,
    header,
    replacements: [
      { what: "0011's header", find: header, replace: "CREATE OR REPLACE FUNCTION {schema}.perdure_commit_step(p jsonb, p_catalog jsonb)\nRETURNS jsonb LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$" },
      { what: "0011's Attribute upsert", find: upsert, replace: updateFirst },
    ],
  });
}

export const commitStepAttributeWritesMigration: Migration = {
  name: "0017_commit_step_attribute_writes",
  sql: `\n${commitStepWithUpdateFirst()}\n`,
};
