/**
 * Migration 0002: the server-side functions behind the PostgreSQL store's
 * one-request Step commit and flow start (see `store/step-commit.ts`). Each
 * is called as one prepared statement outside an explicit transaction, so
 * the statement is the transaction: one round trip, one WAL flush. Their
 * rows are exactly what the general path writes; the conformance suite runs
 * against both.
 */
import type { Migration } from "./migration.ts";

const claimableWhere = `e.claimed_by IS NULL AND e.status IN ('asking', 'ready') AND e.available_at <= p_now AND e.flow_type = ANY(p_flow_types)
      AND (e.expires_at IS NULL OR e.expires_at > p_now)`;

export const oneRequestFunctionsMigration: Migration = {
  name: "0002_one_trip_functions",
  sql: `
-- Claims up to p_limit queued tasks in claim order while the catalog covers them
-- (p_catalog: "flowType stepType status" -> [timeoutMs, heartbeatTimeoutMs]); stops at the first it does not.
CREATE OR REPLACE FUNCTION {schema}.perdure_claim_plain(p_worker_id text, p_flow_types text[], p_catalog jsonb, p_limit integer, p_now bigint)
RETURNS jsonb LANGUAGE plpgsql AS $function$
DECLARE
  v_claims jsonb := '[]'::jsonb;
  v_candidate {schema}.executions;
  v_claimed {schema}.executions;
  v_entry jsonb;
  v_timeout bigint;
  v_heartbeat bigint;
  v_locked integer := 0;
  v_visible integer;
  v_stopped boolean := false;
BEGIN
  IF p_limit <= 0 OR coalesce(cardinality(p_flow_types), 0) = 0 THEN
    RETURN jsonb_build_object('claims', v_claims, 'stopped', false, 'skipped', false);
  END IF;
  -- Candidates whether locked or not: more than could be locked means a busy Flow's task waits; look again soon.
  SELECT count(*) INTO v_visible FROM (SELECT 1 FROM {schema}.executions e WHERE ${claimableWhere} LIMIT p_limit) candidates;
  FOR v_candidate IN
    SELECT e.* FROM {schema}.executions e JOIN {schema}.flows f ON f.flow_id = e.flow_id
    WHERE ${claimableWhere}
    ORDER BY e.available_at, e.flow_id, e.seq LIMIT p_limit FOR UPDATE OF e, f SKIP LOCKED
  LOOP
    v_locked := v_locked + 1;
    v_entry := CASE WHEN v_candidate.movement_options IS NULL
      THEN p_catalog -> (v_candidate.flow_type || ' ' || v_candidate.step_type || ' ' || v_candidate.status) END;
    IF v_entry IS NULL THEN
      v_stopped := true;
      EXIT;
    END IF;
    v_timeout := (v_entry ->> 0)::bigint;
    v_heartbeat := (v_entry ->> 1)::bigint;
    UPDATE {schema}.executions SET
      claimed_by = p_worker_id,
      lease_token = lease_token + 1,
      attempt = attempt + 1,
      execute_claims = execute_claims + CASE WHEN status = 'ready' THEN 1 ELSE 0 END,
      deadline_at = p_now + v_timeout,
      lease_expires_at = CASE WHEN v_heartbeat IS NULL THEN p_now + v_timeout ELSE LEAST(p_now + v_timeout, p_now + v_heartbeat) END
    WHERE flow_id = v_candidate.flow_id AND execution_id = v_candidate.execution_id
    RETURNING * INTO v_claimed;
    v_claims := v_claims || jsonb_build_array(jsonb_build_object(
      'execution', to_jsonb(v_claimed),
      'attributes', (SELECT coalesce(jsonb_agg(jsonb_build_array(a.name, a.value)), '[]'::jsonb)
                     FROM {schema}.attributes a WHERE a.flow_id = v_candidate.flow_id AND a.key = '')));
  END LOOP;
  RETURN jsonb_build_object('claims', v_claims, 'stopped', v_stopped, 'skipped', v_visible > v_locked);
END
$function$;

-- One plain Step commit (see StepCommit in store/step-commit.ts): fence, writes, new executions or
-- readiness, completion, history and its trim, then the claim. 'fallback' writes nothing.
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
  v_claim jsonb := p -> 'claim';
  v_flow_status text;
  v_next_seq bigint;
  v_claimed_by text;
  v_lease_token bigint;
  v_attempt bigint;
  v_status text;
  v_step_type text;
  v_seq bigint;
  v_write jsonb;
  v_movement jsonb;
  v_written boolean := jsonb_array_length(p -> 'writes') > 0;
  v_outcome text := 'committed';
  v_claimed jsonb := NULL;
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
  ELSIF v_status <> v_expected_status
     OR (jsonb_array_length(p -> 'movements') > 0 AND v_flow_status <> 'running')
     OR (jsonb_typeof(v_finish) = 'object'
         AND EXISTS (SELECT 1 FROM {schema}.executions o WHERE o.flow_id = v_flow_id AND o.execution_id <> v_execution_id)) THEN
    RETURN jsonb_build_object('outcome', 'fallback');
  ELSE
    v_seq := v_next_seq;
    FOR v_write IN SELECT value FROM jsonb_array_elements(p -> 'writes') LOOP
      IF jsonb_typeof(v_write -> 2) = 'null' THEN
        DELETE FROM {schema}.attributes WHERE flow_id = v_flow_id AND name = v_write ->> 0 AND key = v_write ->> 1;
      ELSE
        INSERT INTO {schema}.attributes (flow_id, name, key, value) VALUES (v_flow_id, v_write ->> 0, v_write ->> 1, v_write ->> 2)
          ON CONFLICT (flow_id, name, key) DO UPDATE SET value = excluded.value;
      END IF;
    END LOOP;
    DELETE FROM {schema}.locks WHERE flow_id = v_flow_id AND execution_id = v_execution_id;
    IF v_method = 'execute' THEN
      FOR v_movement IN SELECT value FROM jsonb_array_elements(p -> 'movements') LOOP
        INSERT INTO {schema}.executions SELECT * FROM jsonb_populate_record(NULL::{schema}.executions,
          v_movement || jsonb_build_object('flow_id', v_flow_id, 'seq', v_seq, 'execution_id', v_seq::text));
        v_seq := v_seq + 1;
      END LOOP;
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
    IF jsonb_typeof(v_finish) = 'object' OR v_seq <> v_next_seq OR v_written THEN
      UPDATE {schema}.flows SET
        status = CASE WHEN jsonb_typeof(v_finish) = 'object' THEN v_finish ->> 'status' ELSE status END,
        output = CASE WHEN jsonb_typeof(v_finish) = 'object' THEN v_finish ->> 'output' ELSE output END,
        error = CASE WHEN jsonb_typeof(v_finish) = 'object' THEN v_finish ->> 'error' ELSE error END,
        next_seq = v_seq,
        updated_at = CASE WHEN v_seq <> v_next_seq OR v_written THEN v_now ELSE updated_at END
      WHERE flow_id = v_flow_id;
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
  RETURN jsonb_build_object('outcome', v_outcome, 'claimed', v_claimed);
END
$function$;

-- A group of Step commits of different Flows in one transaction (one WAL flush), each in a block of
-- its own: a member that fails (its error is its reply) is rolled back alone and leaves the others.
-- Members lock their Flow without waiting (lock_not_available is retried alone by the caller), so a
-- busy Flow never holds up the group; the caller sorts members by flow ID.
CREATE OR REPLACE FUNCTION {schema}.perdure_commit_steps(p_commits jsonb, p_catalogs jsonb)
RETURNS jsonb LANGUAGE plpgsql AS $function$
DECLARE
  v_commit jsonb;
  v_reply jsonb;
  v_replies jsonb := '[]'::jsonb;
BEGIN
  FOR v_commit IN SELECT value FROM jsonb_array_elements(p_commits) LOOP
    BEGIN
      v_reply := {schema}.perdure_commit_step(v_commit, p_catalogs -> ((v_commit ->> 'catalogIndex')::integer));
    EXCEPTION WHEN OTHERS THEN
      v_reply := jsonb_build_object('outcome', 'error', 'code', SQLSTATE, 'message', SQLERRM);
    END;
    v_replies := v_replies || jsonb_build_array(v_reply);
  END LOOP;
  RETURN v_replies;
END
$function$;

-- A flow start: the Flow row and its start execution, or the existing Flow's type, status and request ID.
CREATE OR REPLACE FUNCTION {schema}.perdure_start_flow(p_flow jsonb, p_execution jsonb)
RETURNS jsonb LANGUAGE plpgsql AS $function$
DECLARE
  v_existing record;
BEGIN
  INSERT INTO {schema}.flows SELECT * FROM jsonb_populate_record(NULL::{schema}.flows, p_flow) ON CONFLICT (flow_id) DO NOTHING;
  IF FOUND THEN
    IF jsonb_typeof(p_execution) = 'object' THEN
      INSERT INTO {schema}.executions SELECT * FROM jsonb_populate_record(NULL::{schema}.executions, p_execution);
    END IF;
    RETURN jsonb_build_object('created', true);
  END IF;
  SELECT flow_type, status, request_id INTO v_existing FROM {schema}.flows WHERE flow_id = p_flow ->> 'flow_id';
  IF NOT FOUND THEN
    -- Created and removed between the two statements: a fresh attempt decides.
    RAISE EXCEPTION 'Flow % was created concurrently', p_flow ->> 'flow_id' USING ERRCODE = '40001';
  END IF;
  RETURN jsonb_build_object('created', false, 'flowType', v_existing.flow_type, 'status', v_existing.status, 'requestId', v_existing.request_id);
END
$function$;
`,
};
