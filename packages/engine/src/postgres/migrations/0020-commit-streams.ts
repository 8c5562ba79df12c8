/**
 * Migration 0020: a Step commit carries its attempt's last Stream messages.
 *
 * - `perdure_write_stream_messages` moves a Flow's Stream heads and inserts
 *   the messages, by runs of one Stream as 0016 does, and counts no bytes.
 * - `perdure_count_stream_bytes` adds bytes to the Flow types' counts and
 *   trims each Stream to its budget as 0016 does, taking the count rows in
 *   one order (Flow type, then Stream, in bytes).
 * - `perdure_append_streams` (same signature) now runs the two in that
 *   order: every head of the batch first, then the counts. Before, it took a
 *   head and a count by turns.
 * - `perdure_heartbeat_streams`: a heartbeat that appends the attempt's
 *   Stream messages so far, held lease or not, in one request.
 * - `perdure_commit_step_streams` and `perdure_commit_steps_streams` run
 *   0017's commit and 0002's group commit, then, for each commit that
 *   landed with `streams`, writes its messages (members in their flow ID
 *   order), then all the counts, then sends the NOTIFYs. A fenced or
 *   fallen-back commit appends nothing.
 *
 * So every transaction takes Stream locks in one order: the Flows' rows
 * first (a commit's own), then Stream heads, then count rows, each in a
 * fixed order. A count row is shared by every Flow of its type, and a
 * commit holds it through its WAL flush (the plain append does not wait for
 * the flush); taking it last keeps that hold short.
 * docs/decisions/2026-12-07-stream-writes-in-the-step-commit.md
 */
import type { Migration } from "./migration.ts";

export const commitStreamsMigration: Migration = {
  name: "0020_commit_streams",
  sql: `
CREATE OR REPLACE FUNCTION {schema}.perdure_write_stream_messages(
  p_flow_id text, p_flow_type text, p_streams text[], p_values text[], p_bytes bigint[], p_written_at bigint[])
RETURNS bigint[] LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_indexes bigint[] := '{}';
  v_count integer := coalesce(array_length(p_streams, 1), 0);
  v_first integer := 1;
  v_last integer;
  v_position integer;
  v_stream text;
  v_last_index bigint;
BEGIN
  WHILE v_first <= v_count LOOP
    v_stream := p_streams[v_first];
    v_last := v_first;
    WHILE v_last < v_count AND p_streams[v_last + 1] = v_stream LOOP
      v_last := v_last + 1;
    END LOOP;
    UPDATE {schema}.stream_heads SET last_index = last_index + (v_last - v_first + 1)
      WHERE flow_id = p_flow_id AND stream = v_stream
      RETURNING last_index INTO v_last_index;
    IF NOT FOUND THEN
      INSERT INTO {schema}.stream_heads AS h (flow_id, stream, last_index) VALUES (p_flow_id, v_stream, v_last - v_first + 1)
        ON CONFLICT (flow_id, stream) DO UPDATE SET last_index = h.last_index + excluded.last_index
        RETURNING last_index INTO v_last_index;
    END IF;
    INSERT INTO {schema}.stream_messages (flow_id, flow_type, stream, idx, value, bytes, written_at)
      SELECT p_flow_id, p_flow_type, v_stream, v_last_index - v_last + position, p_values[position], p_bytes[position], p_written_at[position]
      FROM generate_series(v_first, v_last) AS position ORDER BY position;
    FOR v_position IN v_first .. v_last LOOP
      v_indexes := v_indexes || (v_last_index - v_last + v_position);
    END LOOP;
    v_first := v_last + 1;
  END LOOP;
  RETURN v_indexes;
END
$function$;

CREATE OR REPLACE FUNCTION {schema}.perdure_count_stream_bytes(p_flow_types text[], p_streams text[], p_capacities bigint[], p_bytes bigint[])
RETURNS void LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_item record;
  v_total bigint;
  v_trimmed bigint;
  v_oldest record;
BEGIN
  FOR v_item IN SELECT t.flow_type, t.stream, t.capacity, sum(t.bytes)::bigint AS bytes
      FROM unnest(p_flow_types, p_streams, p_capacities, p_bytes) AS t(flow_type, stream, capacity, bytes)
      GROUP BY t.flow_type, t.stream, t.capacity
      ORDER BY t.flow_type COLLATE "C", t.stream COLLATE "C", t.capacity LOOP
    UPDATE {schema}.stream_usage SET bytes = bytes + v_item.bytes
      WHERE flow_type = v_item.flow_type AND stream = v_item.stream
      RETURNING bytes INTO v_total;
    IF NOT FOUND THEN
      INSERT INTO {schema}.stream_usage AS u (flow_type, stream, bytes) VALUES (v_item.flow_type, v_item.stream, v_item.bytes)
        ON CONFLICT (flow_type, stream) DO UPDATE SET bytes = u.bytes + excluded.bytes
        RETURNING bytes INTO v_total;
    END IF;
    -- Oldest first, until the Flow type's Stream fits its budget; the count row's lock is held since its update.
    IF v_total > v_item.capacity THEN
      v_trimmed := 0;
      FOR v_oldest IN SELECT id, bytes FROM {schema}.stream_messages
          WHERE flow_type = v_item.flow_type AND stream = v_item.stream ORDER BY id LOOP
        EXIT WHEN v_total - v_trimmed <= v_item.capacity;
        DELETE FROM {schema}.stream_messages WHERE id = v_oldest.id;
        v_trimmed := v_trimmed + v_oldest.bytes;
      END LOOP;
      UPDATE {schema}.stream_usage SET bytes = bytes - v_trimmed WHERE flow_type = v_item.flow_type AND stream = v_item.stream;
    END IF;
  END LOOP;
END
$function$;

CREATE OR REPLACE FUNCTION {schema}.perdure_append_streams(
  p_flow_id text, p_flow_type text, p_streams text[], p_values text[], p_bytes bigint[], p_written_at bigint[],
  p_capacities bigint[], p_channels text[], p_payloads text[])
RETURNS bigint[] LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_indexes bigint[];
  v_position integer;
BEGIN
  v_indexes := {schema}.perdure_write_stream_messages(p_flow_id, p_flow_type, p_streams, p_values, p_bytes, p_written_at);
  PERFORM {schema}.perdure_count_stream_bytes(
    array_fill(p_flow_type, ARRAY[coalesce(array_length(p_streams, 1), 0)]), p_streams, p_capacities, p_bytes);
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR v_position IN 1 .. coalesce(array_length(p_channels, 1), 0) LOOP
    PERFORM pg_notify(p_channels[v_position], p_payloads[v_position]);
  END LOOP;
  RETURN v_indexes;
END
$function$;

-- The Stream messages of commits that landed, each {flowId, flowType, messages: [[stream, value, bytes, writtenAt,
-- capacity], ...], wakes: [[channel, payload], ...]}: every Flow's heads and messages in the given order, then the
-- counts, then the NOTIFYs (sent when the transaction commits).
CREATE OR REPLACE FUNCTION {schema}.perdure_write_commit_streams(p_batches jsonb)
RETURNS void LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_batch jsonb;
  v_streams text[];
  v_values text[];
  v_bytes bigint[];
  v_written_at bigint[];
  v_capacities bigint[];
  v_all_types text[] := '{}';
  v_all_streams text[] := '{}';
  v_all_capacities bigint[] := '{}';
  v_all_bytes bigint[] := '{}';
  v_wake jsonb;
BEGIN
  FOR v_batch IN SELECT value FROM jsonb_array_elements(p_batches) LOOP
    SELECT array_agg(m.e ->> 0 ORDER BY m.i), array_agg(m.e ->> 1 ORDER BY m.i), array_agg((m.e ->> 2)::bigint ORDER BY m.i),
        array_agg((m.e ->> 3)::bigint ORDER BY m.i), array_agg((m.e ->> 4)::bigint ORDER BY m.i)
      INTO v_streams, v_values, v_bytes, v_written_at, v_capacities
      FROM jsonb_array_elements(v_batch -> 'messages') WITH ORDINALITY AS m(e, i);
    IF v_streams IS NULL THEN CONTINUE; END IF;
    PERFORM {schema}.perdure_write_stream_messages(v_batch ->> 'flowId', v_batch ->> 'flowType', v_streams, v_values, v_bytes, v_written_at);
    v_all_types := v_all_types || array_fill(v_batch ->> 'flowType', ARRAY[array_length(v_streams, 1)]);
    v_all_streams := v_all_streams || v_streams;
    v_all_capacities := v_all_capacities || v_capacities;
    v_all_bytes := v_all_bytes || v_bytes;
  END LOOP;
  PERFORM {schema}.perdure_count_stream_bytes(v_all_types, v_all_streams, v_all_capacities, v_all_bytes);
  FOR v_batch IN SELECT value FROM jsonb_array_elements(p_batches) LOOP
    FOR v_wake IN SELECT value FROM jsonb_array_elements(v_batch -> 'wakes') LOOP
      PERFORM pg_notify(v_wake ->> 0, v_wake ->> 1);
    END LOOP;
  END LOOP;
END
$function$;

CREATE OR REPLACE FUNCTION {schema}.perdure_commit_step_streams(p jsonb, p_catalog jsonb)
RETURNS jsonb LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_reply jsonb;
BEGIN
  v_reply := {schema}.perdure_commit_step(p, p_catalog);
  IF v_reply ->> 'outcome' = 'committed' AND p ? 'streams' THEN
    PERFORM {schema}.perdure_write_commit_streams(jsonb_build_array(p -> 'streams'));
  END IF;
  RETURN v_reply;
END
$function$;

-- A heartbeat (as PostgresOneRequest's heartbeat statement: the Flow row's lock, then the lease and the checkpoint) that
-- also appends Stream messages, whether or not the lease is held. Without a new checkpoint (or without the lease) it
-- does not wait for the WAL flush, as the heartbeat statement does not; the messages are best-effort output.
CREATE OR REPLACE FUNCTION {schema}.perdure_heartbeat_streams(
  p_flow_id text, p_execution_id text, p_worker_id text, p_lease_token bigint, p_now bigint, p_heartbeat_timeout bigint,
  p_checkpoint text, p_flow_type text, p_streams text[], p_values text[], p_bytes bigint[], p_written_at bigint[],
  p_capacities bigint[], p_channels text[], p_payloads text[])
RETURNS boolean LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_previous text;
  v_held boolean;
  v_position integer;
BEGIN
  PERFORM 1 FROM {schema}.flows WHERE flow_id = p_flow_id FOR UPDATE;
  SELECT checkpoint INTO v_previous FROM {schema}.executions
    WHERE flow_id = p_flow_id AND execution_id = p_execution_id AND claimed_by = p_worker_id AND lease_token = p_lease_token;
  v_held := FOUND;
  IF v_held THEN
    UPDATE {schema}.executions e SET checkpoint = p_checkpoint,
      lease_expires_at = CASE WHEN p_heartbeat_timeout IS NULL THEN coalesce(e.deadline_at, p_now)
        ELSE least(coalesce(e.deadline_at, p_now), p_now + p_heartbeat_timeout) END
      WHERE e.flow_id = p_flow_id AND e.execution_id = p_execution_id;
  END IF;
  PERFORM {schema}.perdure_write_stream_messages(p_flow_id, p_flow_type, p_streams, p_values, p_bytes, p_written_at);
  PERFORM {schema}.perdure_count_stream_bytes(
    array_fill(p_flow_type, ARRAY[coalesce(array_length(p_streams, 1), 0)]), p_streams, p_capacities, p_bytes);
  IF NOT v_held OR v_previous IS NOT DISTINCT FROM p_checkpoint THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  FOR v_position IN 1 .. coalesce(array_length(p_channels, 1), 0) LOOP
    PERFORM pg_notify(p_channels[v_position], p_payloads[v_position]);
  END LOOP;
  RETURN v_held;
END
$function$;

-- 0002's group commit, then the Stream messages of the members that landed (the caller sorts members by flow ID).
CREATE OR REPLACE FUNCTION {schema}.perdure_commit_steps_streams(p_commits jsonb, p_catalogs jsonb)
RETURNS jsonb LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_commit jsonb;
  v_reply jsonb;
  v_replies jsonb := '[]'::jsonb;
  v_streams jsonb := '[]'::jsonb;
BEGIN
  FOR v_commit IN SELECT value FROM jsonb_array_elements(p_commits) LOOP
    BEGIN
      v_reply := {schema}.perdure_commit_step(v_commit, p_catalogs -> ((v_commit ->> 'catalogIndex')::integer));
    EXCEPTION WHEN OTHERS THEN
      v_reply := jsonb_build_object('outcome', 'error', 'code', SQLSTATE, 'message', SQLERRM);
    END;
    IF v_reply ->> 'outcome' = 'committed' AND v_commit ? 'streams' THEN
      v_streams := v_streams || jsonb_build_array(v_commit -> 'streams');
    END IF;
    v_replies := v_replies || jsonb_build_array(v_reply);
  END LOOP;
  IF jsonb_array_length(v_streams) > 0 THEN
    PERFORM {schema}.perdure_write_commit_streams(v_streams);
  END IF;
  RETURN v_replies;
END
$function$;
`,
};
