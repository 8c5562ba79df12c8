/**
 * Migration 0011: `perdure_commit_step` once more (0009's stays as it
 * shipped), so that a commit keeps its chain of Steps in its place in the
 * claim order, as the engine's general path does
 * (docs/decisions/2026-12-07-claims-keep-a-chain-in-its-place.md):
 *
 * - a wait the commit completes (its own `waitUntil` conditions matched at
 *   once, or a waiting execution its publishes satisfy) becomes ready at
 *   the request's `place` ([available_at, scheduled_at], the committing
 *   Step's chain place), through a `perdure_match_wait` that takes the place
 *   (0009's stays for processes that call it). A request without `place`
 *   (a process older than this migration) queues at `now`, as before;
 * - the handover in place declines only for a task ahead of the new Step's
 *   place in claim order (`available_at`, Flow ID) when the commit claims
 *   one task; with more free slots, for any waiting task, as before, so the
 *   claim fills them.
 *
 * The new Steps themselves already carried their place: the Worker builds
 * their rows. Everything else is 0009's body unchanged.
 */
import type { Migration } from "./migration.ts";

export const commitStepChainPlaceMigration: Migration = {
  name: "0011_commit_step_chain_place",
  sql: `
-- 0009's perdure_match_wait stays for processes that call it; this one queues the wait it makes ready at
-- the committing Step's place (p_available_at, p_scheduled_at), as FlowTransaction.makeReady does.
-- FlowTransaction.tryCompleteWait for one waiting execution: -1 when its conditions do not hold yet;
-- else it consumes the winning messages, makes the execution ready with its wait result (JSON text
-- as JSON.stringify writes it) and returns how many messages it consumed. Any-of: a fired Timer wins
-- (first declared), else the first ready Channel condition; all-of: every Timer fired and every
-- Channel ready. A Channel condition reads as FlowTransaction.takeIfReady does, limit and all.
CREATE OR REPLACE FUNCTION {schema}.perdure_match_wait(p_flow_id text, p_execution_id text, p_conditions jsonb, p_now bigint, p_expires_at bigint,
  p_available_at bigint, p_scheduled_at bigint)
RETURNS integer LANGUAGE plpgsql AS $function$
DECLARE
  v_any boolean := p_conditions ->> 'mode' = 'any_of';
  v_item jsonb;
  v_fired text[] := '{}';
  v_fired_timers text[] := '{}';
  v_ids text[] := '{}';
  v_parts text[] := '{}';
  v_taken_ids text[];
  v_taken_parts text[];
  v_count integer;
  v_needed integer;
  v_won boolean;
BEGIN
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_conditions -> 'items') AS item WHERE item ->> 'kind' = 'timer') THEN
    v_fired := ARRAY(SELECT t.timer_id FROM {schema}.timers t WHERE t.flow_id = p_flow_id AND t.execution_id = p_execution_id AND t.fired);
  END IF;
  IF v_any THEN
    SELECT ARRAY[item ->> 'timerId'] INTO v_fired_timers FROM jsonb_array_elements(p_conditions -> 'items') WITH ORDINALITY AS i(item, position)
      WHERE item ->> 'kind' = 'timer' AND (item ->> 'timerId') = ANY(v_fired) ORDER BY position LIMIT 1;
    v_fired_timers := coalesce(v_fired_timers, '{}');
    IF cardinality(v_fired_timers) = 0 THEN
      v_won := jsonb_array_length(p_conditions -> 'items') = 0;
      FOR v_item IN SELECT item FROM jsonb_array_elements(p_conditions -> 'items') WITH ORDINALITY AS i(item, position) ORDER BY position LOOP
        CONTINUE WHEN v_item ->> 'kind' <> 'channel';
        SELECT taken.ids, taken.parts, taken.n INTO v_taken_ids, v_taken_parts, v_count FROM {schema}.perdure_take_messages(p_flow_id, v_item, '{}') AS taken;
        v_needed := CASE WHEN v_item ->> 'bound' = 'at_most' THEN 1 ELSE (v_item ->> 'count')::integer END;
        IF v_count >= v_needed THEN
          v_ids := v_taken_ids;
          v_parts := v_taken_parts;
          v_won := true;
          EXIT;
        END IF;
      END LOOP;
      IF NOT v_won THEN
        RETURN -1;
      END IF;
    END IF;
  ELSE
    FOR v_item IN SELECT item FROM jsonb_array_elements(p_conditions -> 'items') WITH ORDINALITY AS i(item, position) ORDER BY position LOOP
      CONTINUE WHEN v_item ->> 'kind' <> 'timer';
      IF NOT ((v_item ->> 'timerId') = ANY(v_fired)) THEN
        RETURN -1;
      END IF;
      v_fired_timers := v_fired_timers || (v_item ->> 'timerId');
    END LOOP;
    FOR v_item IN SELECT item FROM jsonb_array_elements(p_conditions -> 'items') WITH ORDINALITY AS i(item, position) ORDER BY position LOOP
      CONTINUE WHEN v_item ->> 'kind' <> 'channel';
      SELECT taken.ids, taken.parts, taken.n INTO v_taken_ids, v_taken_parts, v_count FROM {schema}.perdure_take_messages(p_flow_id, v_item, v_ids) AS taken;
      v_needed := CASE WHEN v_item ->> 'bound' = 'at_most' THEN 1 ELSE (v_item ->> 'count')::integer END;
      IF v_count < v_needed THEN
        RETURN -1;
      END IF;
      v_ids := v_ids || v_taken_ids;
      v_parts := v_parts || v_taken_parts;
    END LOOP;
  END IF;
  IF cardinality(v_ids) > 0 THEN
    DELETE FROM {schema}.messages WHERE flow_id = p_flow_id AND message_id = ANY(v_ids);
  END IF;
  -- FlowTransaction.makeReady of a waiting execution: its Timers go.
  DELETE FROM {schema}.timers WHERE flow_id = p_flow_id AND execution_id = p_execution_id;
  UPDATE {schema}.executions SET status = 'ready', claimed_by = NULL, lease_expires_at = NULL, deadline_at = NULL,
    available_at = p_available_at, attempt = 0, scheduled_at = p_scheduled_at, expires_at = p_expires_at, conditions = NULL,
    wait_result = '{"firedTimers":[' || array_to_string(ARRAY(SELECT to_json(t.timer_id)::text FROM unnest(v_fired_timers) WITH ORDINALITY AS t(timer_id, position) ORDER BY t.position), ',')
      || '],"messages":[' || array_to_string(v_parts, ',') || ']}'
  WHERE flow_id = p_flow_id AND execution_id = p_execution_id;
  RETURN cardinality(v_ids);
END
$function$;

CREATE OR REPLACE FUNCTION {schema}.perdure_commit_step(p jsonb, p_catalog jsonb)
RETURNS jsonb LANGUAGE plpgsql AS $function$
DECLARE
  v_flow_id text := p ->> 'flowId';
  v_execution_id text := p ->> 'executionId';
  v_now bigint := (p ->> 'now')::bigint;
  -- Where the waits this commit completes queue: the committing Step's chain place ([available_at, scheduled_at]).
  v_place_available bigint := coalesce((p -> 'place' ->> 0)::bigint, (p ->> 'now')::bigint);
  v_place_scheduled bigint := coalesce((p -> 'place' ->> 1)::bigint, (p ->> 'now')::bigint);
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
  v_timeout bigint;
  v_heartbeat bigint;
  v_attributes jsonb;
  v_flow_running boolean;
  -- Set once the handover holds the Flow's lock and the new sequence numbers.
  v_handing boolean := false;
  -- Publishes as [name, stored key, value]; each takes the next sequence number, before any movement.
  v_publishes jsonb := coalesce(p -> 'publishes', '[]'::jsonb);
  v_publishing boolean := jsonb_array_length(coalesce(p -> 'publishes', '[]'::jsonb)) > 0;
  v_publish jsonb;
  -- A waitUntil that returned conditions: their stored JSON text, the Flow type and the retry window once they match.
  v_wait jsonb := CASE WHEN jsonb_typeof(p -> 'wait') = 'object' THEN p -> 'wait' END;
  v_conditions jsonb;
  v_waiting record;
  v_matched integer;
  -- Messages the matching consumed (they count as writes, as in FlowTransaction.deleteMessage).
  v_consumed integer := 0;
  -- An execution of the Flow became ready (a wait without conditions, or one that matched).
  v_readied boolean := false;
  -- The new Step's lease times from the client's catalog ([timeoutMs, heartbeatTimeoutMs]), sent when
  -- the commit's claim could take that Step alone: only then may the commit hand it over.
  v_handover jsonb := CASE WHEN p ->> 'method' = 'execute' AND jsonb_typeof(p -> 'handover') = 'array'
    AND jsonb_array_length(p -> 'movements') = 1 AND jsonb_typeof(p -> 'finish') IS DISTINCT FROM 'object'
    AND jsonb_typeof(p -> 'claim') = 'object' AND (p -> 'claim' ->> 'limit')::integer > 0
    AND jsonb_array_length(coalesce(p -> 'publishes', '[]'::jsonb)) = 0 THEN p -> 'handover' END;
BEGIN
  -- The handover. A read without locks picks the path; nothing is written before the Flow row's lock
  -- is held, and whatever does not fit takes the general fence below.
  IF v_handover IS NOT NULL THEN
    SELECT f.status = 'running', e.claimed_by, e.lease_token, e.status, e.step_type, e.attempt
      INTO v_flow_running, v_claimed_by, v_lease_token, v_status, v_step_type, v_attempt
      FROM {schema}.flows f JOIN {schema}.executions e ON e.flow_id = f.flow_id
      WHERE f.flow_id = v_flow_id AND e.execution_id = v_execution_id;
    IF FOUND AND v_flow_running AND v_claimed_by = (p ->> 'workerId') AND v_lease_token = (p ->> 'leaseToken')::bigint
      AND v_status = 'ready'
      -- A claim takes the first task in claim order: with one waiting ahead of the new Step's place, the
      -- new Step queues behind it. With more than one free slot, any task waiting takes the claim too.
      AND NOT EXISTS (SELECT 1 FROM {schema}.executions q WHERE q.claimed_by IS NULL AND q.status IN ('asking', 'ready')
        AND q.available_at <= v_now AND q.flow_type IN (SELECT jsonb_array_elements_text(v_claim -> 'flowTypes'))
        AND ((v_claim ->> 'limit')::integer > 1
          OR (q.available_at, q.flow_id) < ((p -> 'movements' -> 0 ->> 'available_at')::bigint, v_flow_id))) THEN
      IF (p ->> 'noWait')::boolean THEN
        -- A group member never waits: both rows, the Flow's first, or lock_not_available and it goes alone.
        PERFORM 1 FROM {schema}.flows f JOIN {schema}.executions e ON e.flow_id = f.flow_id
          WHERE f.flow_id = v_flow_id AND e.execution_id = v_execution_id FOR UPDATE OF f, e NOWAIT;
      END IF;
      -- The Flow's lock, and sequence numbers for the new Step and its history entry.
      UPDATE {schema}.flows SET next_seq = next_seq + CASE WHEN v_keep > 0 THEN 2 ELSE 1 END, updated_at = v_now
        WHERE flow_id = v_flow_id AND status = 'running'
        RETURNING next_seq - CASE WHEN v_keep > 0 THEN 2 ELSE 1 END INTO v_next_seq;
      v_handing := FOUND;
      -- The holder of the lock this update waited for may have made a task of this Flow ready; then
      -- the claim would take that one first: undo, and the commit, sent again, takes the general path.
      IF v_handing AND EXISTS (SELECT 1 FROM {schema}.executions q WHERE q.flow_id = v_flow_id AND q.status IN ('asking', 'ready')
        AND q.claimed_by IS NULL AND q.available_at <= v_now) THEN
        RAISE EXCEPTION 'perdure: a task of Flow % became ready while its Step committed', v_flow_id
          USING ERRCODE = 'serialization_failure';
      END IF;
    END IF;
  END IF;
  IF NOT v_handing THEN
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
    ELSIF v_publishing AND EXISTS (SELECT 1 FROM {schema}.executions w WHERE w.flow_id = v_flow_id AND w.status = 'waiting'
        AND w.conditions IS NOT NULL AND (w.movement_options IS NOT NULL OR position('\\u0000' IN w.conditions) > 0
          OR w.conditions ~ '\\\\u[dD][89a-fA-F]'
          OR NOT (coalesce(p -> 'readyTotals', '{}'::jsonb) ? w.step_type))) THEN
      -- A wait the publishes may complete whose retry window depends on its movement options, or whose
      -- conditions jsonb cannot hold (a key with U+0000 or a lone surrogate, escaped as \\uD8xx): the general path matches it.
      RETURN jsonb_build_object('outcome', 'fallback');
    END IF;
  END IF;
  IF v_outcome = 'committed' THEN
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
    -- Publishes, as FlowTransaction.publish: the message ID leads with the zero-padded sequence number.
    FOR v_publish IN SELECT value FROM jsonb_array_elements(v_publishes) LOOP
      INSERT INTO {schema}.messages (flow_id, seq, channel, key, message_id, value, published_at)
        VALUES (v_flow_id, v_seq, v_publish ->> 0, v_publish ->> 1,
          CASE WHEN length(v_seq::text) < 12 THEN lpad(v_seq::text, 12, '0') ELSE v_seq::text END || '-' || v_now::text,
          v_publish ->> 2, v_now);
      v_seq := v_seq + 1;
    END LOOP;
    IF coalesce((p ->> 'holdsLocks')::boolean, true) THEN
      DELETE FROM {schema}.locks WHERE flow_id = v_flow_id AND execution_id = v_execution_id;
    END IF;
    IF v_handing THEN
      v_movement := p -> 'movements' -> 0;
      v_timeout := (v_handover ->> 0)::bigint;
      v_heartbeat := (v_handover ->> 1)::bigint;
      -- The finished execution becomes the new Step, leased as a claim would lease it; the lease is the fence.
      UPDATE {schema}.executions SET execution_id = v_seq::text, seq = v_seq,
          flow_type = v_movement ->> 'flow_type', step_type = v_movement ->> 'step_type', input = v_movement ->> 'input',
          status = v_movement ->> 'status', claimed_by = p ->> 'workerId', lease_token = (v_movement ->> 'lease_token')::bigint + 1,
          lease_expires_at = CASE WHEN v_heartbeat IS NULL THEN v_now + v_timeout ELSE LEAST(v_now + v_timeout, v_now + v_heartbeat) END,
          deadline_at = v_now + v_timeout, available_at = (v_movement ->> 'available_at')::bigint,
          attempt = (v_movement ->> 'attempt')::bigint + 1,
          execute_claims = (v_movement ->> 'execute_claims')::bigint + CASE WHEN v_movement ->> 'status' = 'ready' THEN 1 ELSE 0 END,
          scheduled_at = (v_movement ->> 'scheduled_at')::bigint, expires_at = (v_movement ->> 'expires_at')::bigint,
          conditions = v_movement ->> 'conditions', wait_result = v_movement ->> 'wait_result', checkpoint = v_movement ->> 'checkpoint',
          movement_options = v_movement ->> 'movement_options', recovery_error = v_movement ->> 'recovery_error',
          last_error = v_movement ->> 'last_error', created_at = (v_movement ->> 'created_at')::bigint
        WHERE flow_id = v_flow_id AND execution_id = v_execution_id
          AND claimed_by = (p ->> 'workerId') AND lease_token = (p ->> 'leaseToken')::bigint AND status = 'ready'
          -- What the history entry takes from the read.
          AND step_type = v_step_type AND attempt = v_attempt;
      IF NOT FOUND THEN
        -- The execution changed after the read: this undoes the commit, and the client sends it again.
        RAISE EXCEPTION 'perdure: execution % of Flow % changed while its Step committed', v_execution_id, v_flow_id
          USING ERRCODE = 'serialization_failure';
      END IF;
      v_seq := v_seq + 1;
    ELSIF v_method = 'execute' THEN
      IF v_movement_count > 0 THEN
        INSERT INTO {schema}.executions
          SELECT r.* FROM jsonb_array_elements(p -> 'movements') WITH ORDINALITY AS m(movement, position),
            LATERAL jsonb_populate_record(NULL::{schema}.executions, m.movement || jsonb_build_object(
              'flow_id', v_flow_id, 'seq', v_seq + m.position - 1, 'execution_id', (v_seq + m.position - 1)::text)) AS r
          ORDER BY m.position;
        v_seq := v_seq + v_movement_count;
      END IF;
      DELETE FROM {schema}.executions WHERE flow_id = v_flow_id AND execution_id = v_execution_id;
    ELSIF v_wait IS NOT NULL THEN
      -- FlowTransaction.startWaiting: the Timers (one already due fires now), the wait, and matching it at once.
      v_conditions := (v_wait ->> 'conditions')::jsonb;
      INSERT INTO {schema}.timers (flow_id, flow_type, execution_id, timer_id, due_at, fired)
        SELECT v_flow_id, v_wait ->> 'flowType', v_execution_id, item ->> 'timerId', (item ->> 'dueAt')::bigint, (item ->> 'dueAt')::bigint <= v_now
        FROM jsonb_array_elements(v_conditions -> 'items') AS item WHERE item ->> 'kind' = 'timer'
        ON CONFLICT (flow_id, execution_id, timer_id) DO UPDATE SET flow_type = excluded.flow_type, due_at = excluded.due_at, fired = excluded.fired;
      UPDATE {schema}.executions SET status = 'waiting', claimed_by = NULL, lease_expires_at = NULL, deadline_at = NULL, conditions = v_wait ->> 'conditions'
        WHERE flow_id = v_flow_id AND execution_id = v_execution_id;
      v_matched := {schema}.perdure_match_wait(v_flow_id, v_execution_id, v_conditions, v_now, (v_wait ->> 'expiresAt')::bigint,
        v_place_available, v_place_scheduled);
      IF v_matched >= 0 THEN
        v_readied := true;
        v_consumed := v_consumed + v_matched;
      END IF;
    ELSE
      UPDATE {schema}.executions SET status = 'ready', claimed_by = NULL, lease_expires_at = NULL, deadline_at = NULL,
        available_at = v_now, attempt = 0, scheduled_at = v_now, expires_at = (p -> 'ready' ->> 'expiresAt')::bigint,
        conditions = NULL, wait_result = p -> 'ready' ->> 'waitResult'
      WHERE flow_id = v_flow_id AND execution_id = v_execution_id;
      v_readied := true;
    END IF;
    IF v_keep > 0 THEN
      INSERT INTO {schema}.history (flow_id, seq, execution_id, step_type, method, status, attempt, started_at, finished_at, outcome, error)
      VALUES (v_flow_id, v_seq, v_execution_id, v_step_type, v_method, 'completed', v_attempt, (p ->> 'startedAt')::bigint, v_now, p ->> 'outcome', NULL);
      v_seq := v_seq + 1;
    END IF;
    IF v_publishing THEN
      -- FlowTransaction.matchWaitsIfTouched: every waiting execution of the Flow, oldest first.
      FOR v_waiting IN SELECT w.execution_id, w.step_type, w.conditions FROM {schema}.executions w
          WHERE w.flow_id = v_flow_id AND w.status = 'waiting' ORDER BY w.seq LOOP
        CONTINUE WHEN v_waiting.conditions IS NULL;
        v_matched := {schema}.perdure_match_wait(v_flow_id, v_waiting.execution_id, v_waiting.conditions::jsonb, v_now,
          CASE WHEN v_waiting.execution_id = v_execution_id AND v_wait IS NOT NULL THEN (v_wait ->> 'expiresAt')::bigint
            ELSE v_now + (p -> 'readyTotals' ->> v_waiting.step_type)::bigint END, v_place_available, v_place_scheduled);
        IF v_matched >= 0 THEN
          v_readied := true;
          v_consumed := v_consumed + v_matched;
        END IF;
      END LOOP;
    END IF;
    v_written := v_written OR v_consumed > 0;
    IF v_finishing THEN
      UPDATE {schema}.flows SET
        status = v_finish ->> 'status', output = v_finish ->> 'output', error = v_finish ->> 'error', next_seq = v_seq,
        updated_at = CASE WHEN v_seq <> v_next_seq OR v_written THEN v_now ELSE updated_at END
      WHERE flow_id = v_flow_id
      RETURNING input, created_at, updated_at INTO v_input, v_created_at, v_updated_at;
      v_ended := jsonb_build_object('input', v_input, 'createdAt', v_created_at, 'updatedAt', v_updated_at);
    ELSIF NOT v_handing AND (v_seq <> v_next_seq OR v_written) THEN
      -- A handover moved the Flow's counter when it took the lock.
      UPDATE {schema}.flows SET next_seq = v_seq, updated_at = v_now WHERE flow_id = v_flow_id;
    END IF;
    -- As the general path: trim when the sequence crosses a multiple of 64.
    IF v_keep > 0 AND (v_seq <> v_next_seq OR v_written) AND v_seq / 64 <> v_next_seq / 64 THEN
      DELETE FROM {schema}.history WHERE flow_id = v_flow_id
        AND seq <= (SELECT h.seq FROM {schema}.history h WHERE h.flow_id = v_flow_id ORDER BY h.seq DESC LIMIT 1 OFFSET v_keep);
    END IF;
  END IF;
  IF v_handing THEN
    -- The short reply: the Worker builds the handed-over row from what it sent.
    SELECT coalesce(jsonb_agg(jsonb_build_array(a.name, a.value)), '[]'::jsonb) INTO v_attributes
      FROM {schema}.attributes a WHERE a.flow_id = v_flow_id AND a.key = '';
    RETURN jsonb_build_object('outcome', 'committed', 'ended', NULL, 'handed', jsonb_build_object('seq', v_next_seq, 'attributes', v_attributes));
  END IF;
  IF jsonb_typeof(v_claim) = 'object' THEN
    v_claimed := {schema}.perdure_claim_plain(p ->> 'workerId', ARRAY(SELECT jsonb_array_elements_text(v_claim -> 'flowTypes')),
      p_catalog, (v_claim ->> 'limit')::integer, v_now);
  END IF;
  RETURN jsonb_build_object('outcome', v_outcome, 'claimed', v_claimed, 'ended', v_ended, 'readied', v_readied OR v_movement_count > 0);
END
$function$;
`,
};
