/**
 * Migration 0003: `perdure_commit_step` again, with fewer statements in the
 * common case and the Flow's input and creation time in the reply when the
 * commit ends it. It writes exactly the rows 0002's version writes (the
 * one-request equivalence test compares both paths); what changed:
 *
 * - the writes loop and the movements run only when there are any, and all
 *   movements go in with one `INSERT … SELECT`;
 * - the check for other executions runs only for a commit that ends the Flow;
 * - the Step's locks are deleted only when its method holds locks
 *   (`holdsLocks`; a request without the field deletes them, as before);
 * - an ending commit returns `ended: { input, createdAt, updatedAt }` from its `UPDATE`,
 *   so a waiter in the committing process can describe the ended Flow
 *   without reading it again.
 *
 * Each statement a PL/pgSQL function runs pays for its executor start-up,
 * which is most of a commit's server time (see the 2026-12-04 ADR).
 * docs/decisions/2026-12-05-local-start-handover-and-wait-for-flow.md
 */
import type { Migration } from "./migration.ts";

export const leanCommitFunctionMigration: Migration = {
  name: "0003_lean_commit_step",
  sql: `
CREATE OR REPLACE FUNCTION {schema}.perdure_commit_step(p jsonb, p_catalog jsonb)
RETURNS jsonb LANGUAGE plpgsql AS $function$
DECLARE
  v_flow_id text := p ->> 'flowId';
  v_execution_id text := p ->> 'executionId';
  v_now bigint := (p ->> 'now')::bigint;
  v_method text := p ->> 'method';
  -- A claimed execute attempt's execution is ready; a claimed waitUntil attempt's is asking.
  v_expected_status text := CASE WHEN p ->> 'method' = 'execute' THEN 'ready' ELSE 'asking' END;
  v_keep bigint := (p ->> 'historyKeep')::bigint;
  v_finish jsonb := p -> 'finish';
  v_finishing boolean := jsonb_typeof(p -> 'finish') = 'object';
  v_claim jsonb := p -> 'claim';
  v_movement_count integer := jsonb_array_length(p -> 'movements');
  v_written boolean := jsonb_array_length(p -> 'writes') > 0;
  v_flow_status text;
  v_next_seq bigint;
  v_claimed_by text;
  v_lease_token bigint;
  v_attempt bigint;
  v_status text;
  v_step_type text;
  v_seq bigint;
  v_write jsonb;
  v_outcome text := 'committed';
  v_claimed jsonb := NULL;
  v_ended jsonb := NULL;
  v_input text;
  v_created_at bigint;
  v_updated_at bigint;
BEGIN
  IF (p ->> 'noWait')::boolean THEN
    SELECT f.status, f.next_seq, e.claimed_by, e.lease_token, e.attempt, e.status, e.step_type
      INTO v_flow_status, v_next_seq, v_claimed_by, v_lease_token, v_attempt, v_status, v_step_type
      FROM {schema}.flows f JOIN {schema}.executions e ON e.flow_id = f.flow_id
      WHERE f.flow_id = v_flow_id AND e.execution_id = v_execution_id
      FOR UPDATE OF f, e NOWAIT;
  ELSE
    SELECT f.status, f.next_seq, e.claimed_by, e.lease_token, e.attempt, e.status, e.step_type
      INTO v_flow_status, v_next_seq, v_claimed_by, v_lease_token, v_attempt, v_status, v_step_type
      FROM {schema}.flows f JOIN {schema}.executions e ON e.flow_id = f.flow_id
      WHERE f.flow_id = v_flow_id AND e.execution_id = v_execution_id
      FOR UPDATE OF f, e;
  END IF;
  IF NOT FOUND OR v_claimed_by IS DISTINCT FROM (p ->> 'workerId') OR v_lease_token <> (p ->> 'leaseToken')::bigint THEN
    v_outcome := 'fenced';
  ELSIF v_status <> v_expected_status OR (v_movement_count > 0 AND v_flow_status <> 'running') THEN
    RETURN jsonb_build_object('outcome', 'fallback');
  ELSIF v_finishing AND EXISTS (SELECT 1 FROM {schema}.executions o WHERE o.flow_id = v_flow_id AND o.execution_id <> v_execution_id) THEN
    RETURN jsonb_build_object('outcome', 'fallback');
  ELSE
    v_seq := v_next_seq;
    IF v_written THEN
      FOR v_write IN SELECT value FROM jsonb_array_elements(p -> 'writes') LOOP
        IF jsonb_typeof(v_write -> 2) = 'null' THEN
          DELETE FROM {schema}.attributes WHERE flow_id = v_flow_id AND name = v_write ->> 0 AND key = v_write ->> 1;
        ELSE
          INSERT INTO {schema}.attributes (flow_id, name, key, value) VALUES (v_flow_id, v_write ->> 0, v_write ->> 1, v_write ->> 2)
            ON CONFLICT (flow_id, name, key) DO UPDATE SET value = excluded.value;
        END IF;
      END LOOP;
    END IF;
    IF coalesce((p ->> 'holdsLocks')::boolean, true) THEN
      DELETE FROM {schema}.locks WHERE flow_id = v_flow_id AND execution_id = v_execution_id;
    END IF;
    IF v_method = 'execute' THEN
      IF v_movement_count > 0 THEN
        INSERT INTO {schema}.executions
          SELECT r.* FROM jsonb_array_elements(p -> 'movements') WITH ORDINALITY AS m(movement, position),
            LATERAL jsonb_populate_record(NULL::{schema}.executions, m.movement || jsonb_build_object(
              'flow_id', v_flow_id, 'seq', v_seq + m.position - 1, 'execution_id', (v_seq + m.position - 1)::text)) AS r
          ORDER BY m.position;
        v_seq := v_seq + v_movement_count;
      END IF;
      DELETE FROM {schema}.executions WHERE flow_id = v_flow_id AND execution_id = v_execution_id;
    ELSE
      UPDATE {schema}.executions SET status = 'ready', claimed_by = NULL, lease_expires_at = NULL, deadline_at = NULL,
        available_at = v_now, attempt = 0, scheduled_at = v_now, expires_at = (p -> 'ready' ->> 'expiresAt')::bigint,
        conditions = NULL, wait_result = p -> 'ready' ->> 'waitResult'
      WHERE flow_id = v_flow_id AND execution_id = v_execution_id;
    END IF;
    IF v_keep > 0 THEN
      INSERT INTO {schema}.history (flow_id, seq, execution_id, step_type, method, status, attempt, started_at, finished_at, outcome, error)
      VALUES (v_flow_id, v_seq, v_execution_id, v_step_type, v_method, 'completed', v_attempt, (p ->> 'startedAt')::bigint, v_now, p ->> 'outcome', NULL);
      v_seq := v_seq + 1;
    END IF;
    IF v_finishing THEN
      UPDATE {schema}.flows SET
        status = v_finish ->> 'status', output = v_finish ->> 'output', error = v_finish ->> 'error', next_seq = v_seq,
        updated_at = CASE WHEN v_seq <> v_next_seq OR v_written THEN v_now ELSE updated_at END
      WHERE flow_id = v_flow_id
      RETURNING input, created_at, updated_at INTO v_input, v_created_at, v_updated_at;
      v_ended := jsonb_build_object('input', v_input, 'createdAt', v_created_at, 'updatedAt', v_updated_at);
    ELSIF v_seq <> v_next_seq OR v_written THEN
      UPDATE {schema}.flows SET next_seq = v_seq, updated_at = v_now WHERE flow_id = v_flow_id;
    END IF;
    -- As the general path: trim when the sequence crosses a multiple of 64.
    IF v_keep > 0 AND (v_seq <> v_next_seq OR v_written) AND v_seq / 64 <> v_next_seq / 64 THEN
      DELETE FROM {schema}.history WHERE flow_id = v_flow_id
        AND seq <= (SELECT h.seq FROM {schema}.history h WHERE h.flow_id = v_flow_id ORDER BY h.seq DESC LIMIT 1 OFFSET v_keep);
    END IF;
  END IF;
  IF jsonb_typeof(v_claim) = 'object' THEN
    v_claimed := {schema}.perdure_claim_plain(p ->> 'workerId', ARRAY(SELECT jsonb_array_elements_text(v_claim -> 'flowTypes')),
      p_catalog, (v_claim ->> 'limit')::integer, v_now);
  END IF;
  RETURN jsonb_build_object('outcome', v_outcome, 'claimed', v_claimed, 'ended', v_ended);
END
$function$;
`,
};
