/**
 * Migration 0016: `perdure_append_streams` again (0013's stays as it
 * shipped), writing a batch by runs instead of by messages. A run is the
 * batch's consecutive messages of one Stream with one capacity (the caller
 * sorts a batch by Stream name, so usually one run per Stream). Per run it
 * moves the head once by the run's length, inserts the run's messages in
 * one statement, adds the run's bytes to the Flow type's count once, and
 * trims the oldest messages while the count is over the capacity. The
 * indexes, the message rows, the count and the trim end as 0013's message
 * by message leaves them: trimming oldest first after each message or
 * once after the run deletes the same shortest prefix, because the count
 * only grows within a run.
 *
 * The head and the count are updated first and inserted only when missing
 * (the Stream's first message of a Flow, the Flow type's first message):
 * `INSERT … ON CONFLICT DO UPDATE` on an existing row writes a row-lock
 * record to the WAL besides the update, and the update of a row that
 * exists is what nearly every write does. Same signature, same generic
 * plans (migrations.test.ts checks the setting).
 * docs/decisions/2026-12-07-asynchronous-claims-and-heartbeats.md (the
 * measurements), docs/decisions/2026-12-07-batched-stream-writes.md
 */
import type { Migration } from "./migration.ts";

export const appendStreamsByRunMigration: Migration = {
  name: "0016_append_streams_by_run",
  sql: `
CREATE OR REPLACE FUNCTION {schema}.perdure_append_streams(
  p_flow_id text, p_flow_type text, p_streams text[], p_values text[], p_bytes bigint[], p_written_at bigint[],
  p_capacities bigint[], p_channels text[], p_payloads text[])
RETURNS bigint[] LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_indexes bigint[] := '{}';
  v_count integer := coalesce(array_length(p_streams, 1), 0);
  v_first integer := 1;
  v_last integer;
  v_position integer;
  v_stream text;
  v_capacity bigint;
  v_run_bytes bigint;
  v_last_index bigint;
  v_total bigint;
  v_trimmed bigint;
  v_oldest record;
BEGIN
  WHILE v_first <= v_count LOOP
    -- The run: consecutive messages of one Stream and one capacity.
    v_stream := p_streams[v_first];
    v_capacity := p_capacities[v_first];
    v_last := v_first;
    v_run_bytes := p_bytes[v_first];
    WHILE v_last < v_count AND p_streams[v_last + 1] = v_stream AND p_capacities[v_last + 1] = v_capacity LOOP
      v_last := v_last + 1;
      v_run_bytes := v_run_bytes + p_bytes[v_last];
    END LOOP;
    UPDATE {schema}.stream_heads SET last_index = last_index + (v_last - v_first + 1)
      WHERE flow_id = p_flow_id AND stream = v_stream
      RETURNING last_index INTO v_last_index;
    IF NOT FOUND THEN
      INSERT INTO {schema}.stream_heads AS h (flow_id, stream, last_index) VALUES (p_flow_id, v_stream, v_last - v_first + 1)
        ON CONFLICT (flow_id, stream) DO UPDATE SET last_index = h.last_index + excluded.last_index
        RETURNING last_index INTO v_last_index;
    END IF;
    -- In array order, so the identity column numbers them in order as 0013's one-by-one inserts did.
    INSERT INTO {schema}.stream_messages (flow_id, flow_type, stream, idx, value, bytes, written_at)
      SELECT p_flow_id, p_flow_type, v_stream, v_last_index - v_last + position, p_values[position], p_bytes[position], p_written_at[position]
      FROM generate_series(v_first, v_last) AS position ORDER BY position;
    UPDATE {schema}.stream_usage SET bytes = bytes + v_run_bytes
      WHERE flow_type = p_flow_type AND stream = v_stream
      RETURNING bytes INTO v_total;
    IF NOT FOUND THEN
      INSERT INTO {schema}.stream_usage AS u (flow_type, stream, bytes) VALUES (p_flow_type, v_stream, v_run_bytes)
        ON CONFLICT (flow_type, stream) DO UPDATE SET bytes = u.bytes + excluded.bytes
        RETURNING bytes INTO v_total;
    END IF;
    -- Oldest first, until the Flow type's Stream fits its budget; the usage row's lock is held since its update.
    IF v_total > v_capacity THEN
      v_trimmed := 0;
      FOR v_oldest IN SELECT id, bytes FROM {schema}.stream_messages
          WHERE flow_type = p_flow_type AND stream = v_stream ORDER BY id LOOP
        EXIT WHEN v_total - v_trimmed <= v_capacity;
        DELETE FROM {schema}.stream_messages WHERE id = v_oldest.id;
        v_trimmed := v_trimmed + v_oldest.bytes;
      END LOOP;
      UPDATE {schema}.stream_usage SET bytes = bytes - v_trimmed WHERE flow_type = p_flow_type AND stream = v_stream;
    END IF;
    FOR v_position IN v_first .. v_last LOOP
      v_indexes := v_indexes || (v_last_index - v_last + v_position);
    END LOOP;
    v_first := v_last + 1;
  END LOOP;
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR v_position IN 1 .. coalesce(array_length(p_channels, 1), 0) LOOP
    PERFORM pg_notify(p_channels[v_position], p_payloads[v_position]);
  END LOOP;
  RETURN v_indexes;
END
$function$;
`,
};
