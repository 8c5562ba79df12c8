/**
 * Migration 0007: `perdure_append_stream`, one Stream write as one
 * request. It upserts the Stream's head (the message's index), inserts the
 * message, adds its bytes to the Flow type's count and, while that count is
 * over the budget, deletes the Flow type's oldest messages of the Stream, as
 * the transactional path (`appendStream` in postgres-streams.ts) does, all
 * in the caller's statement, so a reader never sees the new message before
 * the trim. It then turns `synchronous_commit` off for the rest of the
 * statement's implicit transaction, so the commit does not wait for the WAL
 * flush, and sends the readers' NOTIFY, which PostgreSQL delivers at that
 * commit. Returns the message's index.
 * docs/decisions/2026-12-06-postgres-stream-writes-not-flushed.md
 */
import type { Migration } from "./migration.ts";

export const appendStreamFunctionMigration: Migration = {
  name: "0007_append_stream",
  sql: `
CREATE OR REPLACE FUNCTION {schema}.perdure_append_stream(
  p_flow_id text, p_stream text, p_flow_type text, p_value text, p_bytes bigint, p_written_at bigint,
  p_capacity bigint, p_channel text, p_payload text)
RETURNS bigint LANGUAGE plpgsql AS $function$
DECLARE
  v_index bigint;
  v_total bigint;
  v_trimmed bigint := 0;
  v_oldest record;
BEGIN
  INSERT INTO {schema}.stream_heads AS h (flow_id, stream, last_index) VALUES (p_flow_id, p_stream, 1)
    ON CONFLICT (flow_id, stream) DO UPDATE SET last_index = h.last_index + 1
    RETURNING last_index INTO v_index;
  INSERT INTO {schema}.stream_messages (flow_id, flow_type, stream, idx, value, bytes, written_at)
    VALUES (p_flow_id, p_flow_type, p_stream, v_index, p_value, p_bytes, p_written_at);
  INSERT INTO {schema}.stream_usage AS u (flow_type, stream, bytes) VALUES (p_flow_type, p_stream, p_bytes)
    ON CONFLICT (flow_type, stream) DO UPDATE SET bytes = u.bytes + excluded.bytes
    RETURNING bytes INTO v_total;
  -- Oldest first, until the Flow type's Stream fits its budget; the usage row's lock is held since the upsert.
  IF v_total > p_capacity THEN
    FOR v_oldest IN SELECT id, bytes FROM {schema}.stream_messages
        WHERE flow_type = p_flow_type AND stream = p_stream ORDER BY id LOOP
      EXIT WHEN v_total - v_trimmed <= p_capacity;
      DELETE FROM {schema}.stream_messages WHERE id = v_oldest.id;
      v_trimmed := v_trimmed + v_oldest.bytes;
    END LOOP;
    UPDATE {schema}.stream_usage SET bytes = bytes - v_trimmed WHERE flow_type = p_flow_type AND stream = p_stream;
  END IF;
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM pg_notify(p_channel, p_payload);
  RETURN v_index;
END
$function$;
`,
};
