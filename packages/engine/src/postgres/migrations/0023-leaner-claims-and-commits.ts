/**
 * Migration 0023: fewer statements, and a shorter reply, for each claim,
 * Step commit and wait match, so the server does less per agent turn. Each
 * function is built from the text of the migration that last defined it,
 * with a few statements replaced (`rewritten-function.ts`).
 *
 * - `perdure_claim_compact`: 0019's `perdure_claim_plain` with a shorter
 *   reply and fewer statements a claim.
 *   - Each claim in the reply is an array, `[row, attributes, loaded]`: the
 *     claimed execution's columns as an array in the order of
 *     `compactClaimColumns` (where 0019 sent `to_jsonb` of the row, an
 *     object keyed by its 23 column names), the Flow's plain Attributes as
 *     0019 sent them, and the loads read as 0019 read them (null when the
 *     Step type has no static selection).
 *   - The lease update returns that array itself, the Attributes and the
 *     loads read in its `RETURNING`: one statement a claim where 0019 ran
 *     the update and then a statement that built the reply from the row.
 *   - A catalog entry without lock names takes no statement to find that
 *     out (0019 unpacked the list in a subquery for every claim).
 *   What the claim takes and writes, and `stopped`, `skipped` and `more`,
 *   are 0019's. `perdure_claim_plain` stays as it shipped for processes
 *   that call it.
 * - `perdure_commit_step` (0017's) and `perdure_publish_rpc_claiming`
 *   (0022's) claim through `perdure_claim_compact` when the request says
 *   `compactClaims`; a process older than this migration sends no such
 *   field and reads 0019's reply, as before. The commit also runs its
 *   finishing and publishing fallback checks, and its publishes loop, only
 *   for a commit that finishes the Flow or publishes.
 * - `perdure_match_wait` (0015's) skips two statements for a wait without
 *   a fired Timer.
 *
 * In the bench's agent turn (1 session) the functions ran 358 nested
 * statements a turn before and 303 after (341 and 285 at 16 sessions).
 * docs/decisions/2026-12-07-leaner-claims-and-commits.md
 */
import type { Migration } from "./migration.ts";
import { dueTimerWinsMigration } from "./0015-due-timer-wins.ts";
import { commitStepAttributeWritesMigration } from "./0017-commit-step-attribute-writes.ts";
import { claimReportsMoreMigration } from "./0019-claim-reports-more.ts";
import { publishRpcClaimingMigration } from "./0022-publish-rpc-claiming.ts";
import { rewrittenFunction } from "./rewritten-function.ts";

const header = "CREATE OR REPLACE FUNCTION {schema}.perdure_claim_plain(p_worker_id text, p_flow_types text[], p_catalog jsonb, p_limit integer, p_now bigint)";

const lockNames = "    v_lock_names := ARRAY(SELECT jsonb_array_elements_text(CASE WHEN jsonb_typeof(v_entry -> 2) = 'array' THEN v_entry -> 2 ELSE '[]'::jsonb END));\n";

const leaseUpdateEnd = `    WHERE flow_id = v_candidate.flow_id AND execution_id = v_candidate.execution_id
    RETURNING * INTO v_claimed;
    v_count := v_count + 1;`;

const loadsAndReply = `    -- A Step type with a static selection (the entry's fifth element): its loads and the movement's,
    -- read here under the claim's locks.
    v_loads := NULL;
    -- (Options that reach here are castable: the check above let only those through.) An empty list
    -- (a Step type whose selection is a function) reads the movement's loads, when it has options.
    IF jsonb_typeof(v_entry -> 4) = 'array' AND (jsonb_array_length(v_entry -> 4) > 0 OR v_candidate.movement_options IS NOT NULL) THEN
      v_loads := (v_entry -> 4) || CASE WHEN v_candidate.movement_options IS NULL THEN '[]'::jsonb
        ELSE coalesce(v_candidate.movement_options::jsonb -> 'load', '[]'::jsonb) END;
    END IF;
    v_claims := v_claims || jsonb_build_array(jsonb_build_object(
      'execution', to_jsonb(v_claimed),
      'attributes', (SELECT coalesce(jsonb_agg(jsonb_build_array(a.name, a.value)), '[]'::jsonb)
                     FROM {schema}.attributes a WHERE a.flow_id = v_candidate.flow_id AND a.key = ''))
      || CASE WHEN v_loads IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('loaded', {schema}.perdure_read_loads(v_candidate.flow_id, v_loads)) END);
`;

/**
 * The claimed row's columns in the order the reply's first element lists
 * them (the order of the table). Written out here, not derived from the
 * engine's field list, so that this migration's SQL never changes.
 */
export const compactClaimColumns: readonly string[] = [
  "flow_id", "execution_id", "seq", "flow_type", "step_type", "input", "status", "claimed_by", "lease_token", "lease_expires_at",
  "deadline_at", "available_at", "attempt", "execute_claims", "scheduled_at", "expires_at", "conditions", "wait_result", "checkpoint",
  "movement_options", "recovery_error", "last_error", "created_at",
];

const rowColumns = compactClaimColumns.map((column) => `e.${column}`).join(", ");

/** 0019's `perdure_claim_plain` renamed, with its reply compacted and built by the lease update; throws if 0019's text is not as expected. */
function claimCompact(): string {
  return rewrittenFunction({
    migration: "migration 0023",
    source: "0019's perdure_claim_plain",
    sql: claimReportsMoreMigration.sql,
    header,
    replacements: [
      { what: "0019's name", find: "{schema}.perdure_claim_plain(", replace: "{schema}.perdure_claim_compact(" },
      { what: "0019's row variable", find: "  v_claimed {schema}.executions;\n", replace: "  v_claimed jsonb;\n" },
      {
        what: "0019's lock names",
        find: lockNames,
        replace: `    v_lock_names := '{}';
    IF jsonb_typeof(v_entry -> 2) = 'array' AND jsonb_array_length(v_entry -> 2) > 0 THEN
      v_lock_names := ARRAY(SELECT jsonb_array_elements_text(v_entry -> 2));
    END IF;
`,
      },
      {
        what: "0019's loads",
        find: "    UPDATE {schema}.executions SET\n      claimed_by = p_worker_id,",
        replace: `    -- A Step type with a static selection (the entry's fifth element): its loads and the movement's,
    -- read by the update below under the claim's locks. (Options that reach here are castable: the
    -- check above let only those through.) An empty list (a Step type whose selection is a function)
    -- reads the movement's loads, when it has options.
    v_loads := NULL;
    IF jsonb_typeof(v_entry -> 4) = 'array' AND (jsonb_array_length(v_entry -> 4) > 0 OR v_candidate.movement_options IS NOT NULL) THEN
      v_loads := (v_entry -> 4) || CASE WHEN v_candidate.movement_options IS NULL THEN '[]'::jsonb
        ELSE coalesce(v_candidate.movement_options::jsonb -> 'load', '[]'::jsonb) END;
    END IF;
    UPDATE {schema}.executions e SET
      claimed_by = p_worker_id,`,
      },
      {
        what: "0019's lease update",
        find: leaseUpdateEnd,
        replace: `    WHERE e.flow_id = v_candidate.flow_id AND e.execution_id = v_candidate.execution_id
    RETURNING jsonb_build_array(jsonb_build_array(${rowColumns}),
      (SELECT coalesce(jsonb_agg(jsonb_build_array(a.name, a.value)), '[]'::jsonb)
        FROM {schema}.attributes a WHERE a.flow_id = v_candidate.flow_id AND a.key = ''),
      CASE WHEN v_loads IS NOT NULL THEN {schema}.perdure_read_loads(v_candidate.flow_id, v_loads) END) INTO v_claimed;
    v_count := v_count + 1;
    v_claims := v_claims || jsonb_build_array(v_claimed);`,
      },
      { what: "0019's reply of a claim", find: loadsAndReply, replace: "" },
    ],
  });
}

const commitHeader = "CREATE OR REPLACE FUNCTION {schema}.perdure_commit_step(p jsonb, p_catalog jsonb)\nRETURNS jsonb LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$";

const commitClaim = `  IF jsonb_typeof(v_claim) = 'object' THEN
    v_claimed := {schema}.perdure_claim_plain(p ->> 'workerId', ARRAY(SELECT jsonb_array_elements_text(v_claim -> 'flowTypes')),
      p_catalog, (v_claim ->> 'limit')::integer, v_now);
  END IF;`;

const fallbackChecks = `    ELSIF v_finishing AND EXISTS (SELECT 1 FROM {schema}.executions o WHERE o.flow_id = v_flow_id AND o.execution_id <> v_execution_id) THEN
      RETURN jsonb_build_object('outcome', 'fallback');
    ELSIF v_publishing AND EXISTS (`;

/** The same checks, each run only when its flag is set: a condition with a subquery runs as a statement even when its flag is false. */
const fallbackChecksWhereTheyApply = `    ELSIF v_finishing OR v_publishing THEN
      IF v_finishing THEN
        IF EXISTS (SELECT 1 FROM {schema}.executions o WHERE o.flow_id = v_flow_id AND o.execution_id <> v_execution_id) THEN
          RETURN jsonb_build_object('outcome', 'fallback');
        END IF;
      END IF;
      IF v_publishing THEN
        IF EXISTS (`;

const fallbackChecksEnd = `      RETURN jsonb_build_object('outcome', 'fallback');
    END IF;
  END IF;
  IF v_outcome = 'committed' THEN`;

const fallbackChecksWhereTheyApplyEnd = `          RETURN jsonb_build_object('outcome', 'fallback');
        END IF;
      END IF;
    END IF;
  END IF;
  IF v_outcome = 'committed' THEN`;

const publishesLoop = `    FOR v_publish IN SELECT value FROM jsonb_array_elements(v_publishes) LOOP
      INSERT INTO {schema}.messages (flow_id, seq, channel, key, message_id, value, published_at)
        VALUES (v_flow_id, v_seq, v_publish ->> 0, v_publish ->> 1,
          CASE WHEN length(v_seq::text) < 12 THEN lpad(v_seq::text, 12, '0') ELSE v_seq::text END || '-' || v_now::text,
          v_publish ->> 2, v_now);
      v_seq := v_seq + 1;
    END LOOP;
`;

/**
 * 0017's `perdure_commit_step` (generic plans kept), claiming through
 * `perdure_claim_compact` when the request says `compactClaims`, and
 * running its finishing and publishing checks and its publishes loop only
 * for a commit that finishes the Flow or publishes: 0017 ran each as a
 * statement in every commit (about 31 statements of an agent turn's 340).
 */
function commitStepClaimingCompact(): string {
  return rewrittenFunction({
    migration: "migration 0023",
    source: "0017's perdure_commit_step",
    sql: commitStepAttributeWritesMigration.sql,
    header: commitHeader,
    replacements: [
      { what: "0017's fallback checks", find: fallbackChecks, replace: fallbackChecksWhereTheyApply },
      { what: "0017's end of the fallback checks", find: fallbackChecksEnd, replace: fallbackChecksWhereTheyApplyEnd },
      { what: "0017's publishes", find: publishesLoop, replace: `    IF v_publishing THEN\n${publishesLoop}    END IF;\n` },
      {
      what: "0017's claim",
      find: commitClaim,
      replace: `  -- A process older than migration 0023 sends no compactClaims and reads 0019's reply.
  IF jsonb_typeof(v_claim) = 'object' AND (p ->> 'compactClaims')::boolean IS TRUE THEN
    v_claimed := {schema}.perdure_claim_compact(p ->> 'workerId', ARRAY(SELECT jsonb_array_elements_text(v_claim -> 'flowTypes')),
      p_catalog, (v_claim ->> 'limit')::integer, v_now);
  ELSIF jsonb_typeof(v_claim) = 'object' THEN
    v_claimed := {schema}.perdure_claim_plain(p ->> 'workerId', ARRAY(SELECT jsonb_array_elements_text(v_claim -> 'flowTypes')),
      p_catalog, (v_claim ->> 'limit')::integer, v_now);
  END IF;`,
      },
    ],
  });
}

const matchWaitHeader = "CREATE OR REPLACE FUNCTION {schema}.perdure_match_wait(p_flow_id text, p_execution_id text, p_conditions jsonb, p_now bigint, p_expires_at bigint,\n  p_available_at bigint, p_scheduled_at bigint)";

const timerItemsCheck = "  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_conditions -> 'items') AS item WHERE item ->> 'kind' = 'timer') THEN";

const firstFiredTimer = `    SELECT ARRAY[item ->> 'timerId'] INTO v_fired_timers FROM jsonb_array_elements(p_conditions -> 'items') WITH ORDINALITY AS i(item, position)
      WHERE item ->> 'kind' = 'timer' AND (item ->> 'timerId') = ANY(v_fired) ORDER BY position LIMIT 1;
`;

/**
 * 0015's `perdure_match_wait` (generic plans kept), with two statements
 * fewer for a wait without a fired Timer: whether the conditions hold a
 * Timer is a JSON path test (an expression, where 0015 ran a subquery),
 * and an any-of wait looks for its first fired Timer only when one fired
 * (the look found none otherwise, and `v_fired_timers` stays empty).
 */
function matchWaitLeaner(): string {
  return rewrittenFunction({
    migration: "migration 0023",
    source: "0015's perdure_match_wait",
    sql: dueTimerWinsMigration.sql,
    header: matchWaitHeader,
    replacements: [
      { what: "0015's Timer check", find: timerItemsCheck, replace: `  IF p_conditions @? '$.items[*] ? (@.kind == "timer")' THEN` },
      {
        what: "0015's first fired Timer",
        find: firstFiredTimer,
        replace: `    IF cardinality(v_fired) > 0 THEN
      SELECT ARRAY[item ->> 'timerId'] INTO v_fired_timers FROM jsonb_array_elements(p_conditions -> 'items') WITH ORDINALITY AS i(item, position)
        WHERE item ->> 'kind' = 'timer' AND (item ->> 'timerId') = ANY(v_fired) ORDER BY position LIMIT 1;
    END IF;
`,
      },
    ],
  });
}

const publishClaimingHeader = "CREATE OR REPLACE FUNCTION {schema}.perdure_publish_rpc_claiming(p jsonb, p_channel text, p_payload text,\n  p_worker_id text, p_flow_types text[], p_catalog jsonb)";

/** 0022's `perdure_publish_rpc_claiming`, claiming through `perdure_claim_compact` when the request says `compactClaims`. */
function publishClaimingCompact(): string {
  return rewrittenFunction({
    migration: "migration 0023",
    source: "0022's perdure_publish_rpc_claiming",
    sql: publishRpcClaimingMigration.sql,
    header: publishClaimingHeader,
    replacements: [{
      what: "0022's claim",
      find: "  v_claimed := {schema}.perdure_claim_plain(p_worker_id, p_flow_types, p_catalog, 1, (p ->> 'now')::bigint);",
      replace: `  -- A process older than migration 0023 sends no compactClaims and reads 0019's reply.
  IF (p ->> 'compactClaims')::boolean IS TRUE THEN
    v_claimed := {schema}.perdure_claim_compact(p_worker_id, p_flow_types, p_catalog, 1, (p ->> 'now')::bigint);
  ELSE
    v_claimed := {schema}.perdure_claim_plain(p_worker_id, p_flow_types, p_catalog, 1, (p ->> 'now')::bigint);
  END IF;`,
    }],
  });
}

export const leanerClaimsAndCommitsMigration: Migration = {
  name: "0023_leaner_claims_and_commits",
  sql: `\n${claimCompact()}\n\n${commitStepClaimingCompact()}\n\n${matchWaitLeaner()}\n\n${publishClaimingCompact()}\n`,
};
