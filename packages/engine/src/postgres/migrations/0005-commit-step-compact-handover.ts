/**
 * Migration 0005: `perdure_commit_step` again (0004's stays as it shipped),
 * with a shorter handover. A client that sends `handover` (the new Step's
 * lease times from its own catalog, or null) gets back only the new Step's
 * sequence number and the Flow's plain Attributes, and builds the leased
 * row itself, as the SQLite store does; the function skips its catalog
 * lookup, `to_jsonb` of the row and the longer reply. The handed-over row
 * goes in column by column rather than through `jsonb_populate_record`. A
 * request without `handover`, from a process of the previous version during
 * a rolling upgrade, gets 0004's reply. The rows are the same; the one-request
 * equivalence test compares them with the general path.
 * docs/decisions/2026-12-05-postgres-compact-handover.md
 */
import type { Migration } from "./migration.ts";

export const compactHandoverFunctionMigration: Migration = {
  name: "0005_commit_step_compact_handover",
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
  v_movement jsonb;
  v_entry jsonb;
  v_timeout bigint;
  v_heartbeat bigint;
  v_handed {schema}.executions;
  v_handed_over boolean := false;
  -- A client that sends handover builds the handed-over row itself and takes the short reply.
  v_compact boolean := p ? 'handover';
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
      -- One new Step that the Worker may claim alone, and nothing queued before it: a claim here would
      -- take exactly this task, so it goes in already leased to the committing Worker.
      IF v_movement_count = 1 AND jsonb_typeof(v_claim) = 'object' AND (v_claim ->> 'limit')::integer > 0 THEN
        v_movement := p -> 'movements' -> 0;
        IF v_compact THEN
          -- The client looked the new Step up in its catalog: [timeoutMs, heartbeatTimeoutMs], or null.
          v_entry := CASE WHEN jsonb_typeof(p -> 'handover') = 'array' THEN p -> 'handover' END;
        ELSIF v_movement ->> 'movement_options' IS NULL AND (v_movement ->> 'flow_type') IN (SELECT jsonb_array_elements_text(v_claim -> 'flowTypes')) THEN
          v_entry := p_catalog -> ((v_movement ->> 'flow_type') || ' ' || (v_movement ->> 'step_type') || ' ' || (v_movement ->> 'status'));
        END IF;
        IF v_entry IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM {schema}.executions e WHERE e.claimed_by IS NULL AND e.status IN ('asking', 'ready')
            AND e.available_at <= v_now AND e.flow_type IN (SELECT jsonb_array_elements_text(v_claim -> 'flowTypes'))) THEN
          v_timeout := (v_entry ->> 0)::bigint;
          v_heartbeat := (v_entry ->> 1)::bigint;
          -- Column by column: cheaper than merging the movement into a record.
          INSERT INTO {schema}.executions (flow_id, execution_id, seq, flow_type, step_type, input, status, claimed_by, lease_token,
              lease_expires_at, deadline_at, available_at, attempt, execute_claims, scheduled_at, expires_at, conditions, wait_result,
              checkpoint, movement_options, recovery_error, last_error, created_at)
            VALUES (v_flow_id, v_seq::text, v_seq, v_movement ->> 'flow_type', v_movement ->> 'step_type', v_movement ->> 'input',
              v_movement ->> 'status', p ->> 'workerId', (v_movement ->> 'lease_token')::bigint + 1,
              CASE WHEN v_heartbeat IS NULL THEN v_now + v_timeout ELSE LEAST(v_now + v_timeout, v_now + v_heartbeat) END,
              v_now + v_timeout, (v_movement ->> 'available_at')::bigint, (v_movement ->> 'attempt')::bigint + 1,
              (v_movement ->> 'execute_claims')::bigint + CASE WHEN v_movement ->> 'status' = 'ready' THEN 1 ELSE 0 END,
              (v_movement ->> 'scheduled_at')::bigint, (v_movement ->> 'expires_at')::bigint, v_movement ->> 'conditions',
              v_movement ->> 'wait_result', v_movement ->> 'checkpoint', v_movement ->> 'movement_options', v_movement ->> 'recovery_error',
              v_movement ->> 'last_error', (v_movement ->> 'created_at')::bigint)
            RETURNING * INTO v_handed;
          v_handed_over := true;
          v_seq := v_seq + 1;
        END IF;
      END IF;
      IF v_movement_count > 0 AND NOT v_handed_over THEN
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
  IF v_handed_over AND v_compact THEN
    RETURN jsonb_build_object('outcome', v_outcome, 'ended', v_ended, 'handed', jsonb_build_object('seq', v_handed.seq,
      'attributes', (SELECT coalesce(jsonb_agg(jsonb_build_array(a.name, a.value)), '[]'::jsonb)
                     FROM {schema}.attributes a WHERE a.flow_id = v_flow_id AND a.key = '')));
  ELSIF v_handed_over THEN
    v_claimed := jsonb_build_object('claims', jsonb_build_array(jsonb_build_object(
      'execution', to_jsonb(v_handed),
      'attributes', (SELECT coalesce(jsonb_agg(jsonb_build_array(a.name, a.value)), '[]'::jsonb)
                     FROM {schema}.attributes a WHERE a.flow_id = v_flow_id AND a.key = ''))),
      'stopped', false, 'skipped', false);
  ELSIF jsonb_typeof(v_claim) = 'object' THEN
    v_claimed := {schema}.perdure_claim_plain(p ->> 'workerId', ARRAY(SELECT jsonb_array_elements_text(v_claim -> 'flowTypes')),
      p_catalog, (v_claim ->> 'limit')::integer, v_now);
  END IF;
  RETURN jsonb_build_object('outcome', v_outcome, 'claimed', v_claimed, 'ended', v_ended);
END
$function$;
`,
};
