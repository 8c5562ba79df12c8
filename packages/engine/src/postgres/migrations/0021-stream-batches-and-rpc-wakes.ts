/**
 * Migration 0021, two functions beside 0020's (which shipped without them):
 *
 * - `perdure_write_streams`: a batch of one Flow's Stream messages inside
 *   the caller's transaction, every head first, then the byte counts (0020's
 *   `perdure_write_stream_messages`, then `perdure_count_stream_bytes`). It
 *   neither relaxes the caller's commit nor sends a NOTIFY. The general
 *   path's commit (a failed attempt, cancellations, a `fallback`) appends
 *   through it in one statement, in the lock order of every other Stream
 *   write, where it appended message by message, a head and a count by
 *   turns.
 * - `perdure_publish_rpc_waking`: 0014's publish RPC, then the NOTIFY that
 *   wakes other processes' Workers for the task it readied, in its own
 *   transaction, where the Client sent it as a statement of its own.
 * docs/decisions/2026-12-07-stream-writes-in-the-step-commit.md
 */
import type { Migration } from "./migration.ts";

export const streamBatchesAndRpcWakesMigration: Migration = {
  name: "0021_stream_batches_and_rpc_wakes",
  sql: `
CREATE OR REPLACE FUNCTION {schema}.perdure_write_streams(
  p_flow_id text, p_flow_type text, p_streams text[], p_values text[], p_bytes bigint[], p_written_at bigint[], p_capacities bigint[])
RETURNS bigint[] LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_indexes bigint[];
BEGIN
  v_indexes := {schema}.perdure_write_stream_messages(p_flow_id, p_flow_type, p_streams, p_values, p_bytes, p_written_at);
  PERFORM {schema}.perdure_count_stream_bytes(
    array_fill(p_flow_type, ARRAY[coalesce(array_length(p_streams, 1), 0)]), p_streams, p_capacities, p_bytes);
  RETURN v_indexes;
END
$function$;

CREATE OR REPLACE FUNCTION {schema}.perdure_publish_rpc_waking(p jsonb, p_channel text, p_payload text)
RETURNS jsonb LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_reply jsonb;
BEGIN
  v_reply := {schema}.perdure_publish_rpc(p);
  IF (v_reply ->> 'readied')::boolean IS TRUE THEN
    PERFORM pg_notify(p_channel, p_payload);
  END IF;
  RETURN v_reply;
END
$function$;
`,
};
