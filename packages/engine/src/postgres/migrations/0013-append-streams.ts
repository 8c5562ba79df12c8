/**
 * Migration 0013: `perdure_append_streams`, a batch of one Flow's Stream
 * messages as one request. Each message goes in as 0007's
 * `perdure_append_stream` writes one, in array order: the head's upsert
 * gives its index, the message row, the Flow type's byte count, and the trim
 * of that Flow type's oldest messages while the count is over the budget.
 * The arrays are text and bigint arrays, not jsonb, so a value goes in
 * exactly as 0007's text parameter does (jsonb refuses what text takes, such
 * as an escaped lone surrogate). Like 0007 it turns `synchronous_commit` off
 * for the statement's implicit transaction and sends each given NOTIFY, which
 * PostgreSQL delivers at that commit. Returns the messages' indexes in order.
 * The caller sorts a batch by Stream name, so two batches take the byte-count
 * rows' locks in one order. Generic plans as 0012 sets for the others.
 * docs/decisions/2026-12-07-batched-stream-writes.md
 */
import type { Migration } from "./migration.ts";

/** The function's signature as `pg_proc` names it (migrations.test.ts checks its plan setting). */
export const appendStreamsSignature = "perdure_append_streams(text, text, text[], text[], bigint[], bigint[], bigint[], text[], text[])";

export const appendStreamsFunctionMigration: Migration = {
  name: "0013_append_streams",
  sql: `
CREATE OR REPLACE FUNCTION {schema}.perdure_append_streams(
  p_flow_id text, p_flow_type text, p_streams text[], p_values text[], p_bytes bigint[], p_written_at bigint[],
  p_capacities bigint[], p_channels text[], p_payloads text[])
RETURNS bigint[] LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_indexes bigint[] := '{}';
  v_index bigint;
  v_total bigint;
  v_trimmed bigint;
  v_oldest record;
  v_position int;
BEGIN
  FOR v_position IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
    INSERT INTO {schema}.stream_heads AS h (flow_id, stream, last_index) VALUES (p_flow_id, p_streams[v_position], 1)
      ON CONFLICT (flow_id, stream) DO UPDATE SET last_index = h.last_index + 1
      RETURNING last_index INTO v_index;
    INSERT INTO {schema}.stream_messages (flow_id, flow_type, stream, idx, value, bytes, written_at)
      VALUES (p_flow_id, p_flow_type, p_streams[v_position], v_index, p_values[v_position], p_bytes[v_position], p_written_at[v_position]);
    INSERT INTO {schema}.stream_usage AS u (flow_type, stream, bytes) VALUES (p_flow_type, p_streams[v_position], p_bytes[v_position])
      ON CONFLICT (flow_type, stream) DO UPDATE SET bytes = u.bytes + excluded.bytes
      RETURNING bytes INTO v_total;
    -- Oldest first, until the Flow type's Stream fits its budget; the usage row's lock is held since the upsert.
    IF v_total > p_capacities[v_position] THEN
      v_trimmed := 0;
      FOR v_oldest IN SELECT id, bytes FROM {schema}.stream_messages
          WHERE flow_type = p_flow_type AND stream = p_streams[v_position] ORDER BY id LOOP
        EXIT WHEN v_total - v_trimmed <= p_capacities[v_position];
        DELETE FROM {schema}.stream_messages WHERE id = v_oldest.id;
        v_trimmed := v_trimmed + v_oldest.bytes;
      END LOOP;
      UPDATE {schema}.stream_usage SET bytes = bytes - v_trimmed WHERE flow_type = p_flow_type AND stream = p_streams[v_position];
    END IF;
    v_indexes := v_indexes || v_index;
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
