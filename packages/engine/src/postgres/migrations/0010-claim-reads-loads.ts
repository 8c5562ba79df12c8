/**
 * Migration 0010: `perdure_claim_plain` once more (0008's stays as it
 * shipped), and `perdure_read_loads`. A catalog entry of five elements,
 * `[timeoutMs, heartbeatTimeoutMs, lockNames, selectsLoads, staticLoads]`,
 * names a Step type whose selection does not depend on the snapshot (its
 * `load` option is a list, not a function). For such a task the claim reads
 * that selection and the movement's own loads in the claim's transaction,
 * under its locks, and returns them with the claimed row (`loaded`), so the
 * Worker reads nothing more before the Step runs. The Worker sends five
 * elements only to a schema with this migration; four-element entries claim
 * as under 0008, and the Worker reads their loads after the claim.
 * docs/decisions/2026-12-07-one-request-commits-take-waits-and-publishes.md
 */
import type { Migration } from "./migration.ts";

const claimableWhere = `e.claimed_by IS NULL AND e.status IN ('asking', 'ready') AND e.available_at <= p_now AND e.flow_type = ANY(p_flow_types)
      AND (e.expires_at IS NULL OR e.expires_at > p_now)`;

export const claimReadsLoadsMigration: Migration = {
  name: "0010_claim_reads_loads",
  sql: `
-- What each load selects, in order, as PostgresTransaction's readAttribute, readAttributeRange and
-- listMessages read it: an instance's value (null when unset), a range's [key, value] rows in key
-- order, a Channel's [seq, message_id, value, published_at] rows in publish order. Keys arrive as
-- the engine stores them in options (not escaped) and are escaped here.
CREATE OR REPLACE FUNCTION {schema}.perdure_read_loads(p_flow_id text, p_loads jsonb)
RETURNS jsonb LANGUAGE sql STABLE AS $function$
  SELECT coalesce(jsonb_agg(CASE l.load ->> 'kind'
      WHEN 'instance' THEN (SELECT to_jsonb(a.value) FROM {schema}.attributes a
        WHERE a.flow_id = p_flow_id AND a.name = l.load ->> 'name' AND a.key = replace(l.load ->> 'key', chr(1), chr(1) || chr(2)))
      WHEN 'range' THEN (SELECT coalesce(jsonb_agg(jsonb_build_array(r.key, r.value) ORDER BY r.key), '[]'::jsonb) FROM (
        SELECT a.key, a.value FROM {schema}.attributes a
        WHERE a.flow_id = p_flow_id AND a.name = l.load ->> 'name' AND a.key > ''
          AND a.key >= replace(coalesce(l.load ->> 'fromKey', ''), chr(1), chr(1) || chr(2))
          AND (l.load ->> 'toKey' IS NULL OR a.key < replace(l.load ->> 'toKey', chr(1), chr(1) || chr(2)))
        ORDER BY a.key LIMIT (l.load ->> 'limit')::bigint) r)
      ELSE (SELECT coalesce(jsonb_agg(jsonb_build_array(m.seq, m.message_id, m.value, m.published_at) ORDER BY m.seq), '[]'::jsonb)
        FROM {schema}.messages m WHERE m.flow_id = p_flow_id AND m.channel = l.load ->> 'name'
          AND m.key = replace(l.load ->> 'key', chr(1), chr(1) || chr(2)))
      END ORDER BY l.position), '[]'::jsonb)
  FROM jsonb_array_elements(p_loads) WITH ORDINALITY AS l(load, position)
$function$;

CREATE OR REPLACE FUNCTION {schema}.perdure_claim_plain(p_worker_id text, p_flow_types text[], p_catalog jsonb, p_limit integer, p_now bigint)
RETURNS jsonb LANGUAGE plpgsql AS $function$
DECLARE
  v_claims jsonb := '[]'::jsonb;
  v_count integer := 0;
  v_candidate {schema}.executions;
  v_claimed {schema}.executions;
  v_entry jsonb;
  v_timeout bigint;
  v_heartbeat bigint;
  v_lock_names text[];
  v_locked integer := 0;
  v_visible integer;
  v_stopped boolean := false;
  v_loads jsonb;
BEGIN
  IF p_limit <= 0 OR coalesce(cardinality(p_flow_types), 0) = 0 THEN
    RETURN jsonb_build_object('claims', v_claims, 'stopped', false, 'skipped', false);
  END IF;
  -- Candidates whether locked or not: more than could be locked means a busy Flow's task waits; look again soon.
  SELECT count(*) INTO v_visible FROM (SELECT 1 FROM {schema}.executions e WHERE ${claimableWhere} LIMIT p_limit) candidates;
  FOR v_candidate IN
    SELECT e.* FROM {schema}.executions e JOIN {schema}.flows f ON f.flow_id = e.flow_id
    WHERE ${claimableWhere}
    ORDER BY e.available_at, e.flow_id, e.seq LIMIT p_limit + 4 FOR UPDATE OF e, f SKIP LOCKED
  LOOP
    EXIT WHEN v_count >= p_limit;
    v_locked := v_locked + 1;
    v_entry := p_catalog -> (v_candidate.flow_type || ' ' || v_candidate.step_type || ' ' || v_candidate.status);
    -- Movement options that change nothing the claim decides: a load selection alone.
    IF v_candidate.movement_options IS NOT NULL AND NOT (jsonb_array_length(coalesce(v_entry, '[]'::jsonb)) >= 3
        AND (v_candidate.movement_options::jsonb - 'load') = '{}'::jsonb) THEN
      v_entry := NULL;
    END IF;
    IF v_entry IS NULL THEN
      v_stopped := true;
      EXIT;
    END IF;
    v_timeout := (v_entry ->> 0)::bigint;
    v_heartbeat := (v_entry ->> 1)::bigint;
    v_lock_names := ARRAY(SELECT jsonb_array_elements_text(CASE WHEN jsonb_typeof(v_entry -> 2) = 'array' THEN v_entry -> 2 ELSE '[]'::jsonb END));
    IF cardinality(v_lock_names) > 0 THEN
      -- The Flow row is locked (FOR UPDATE above), as the general claim locks it before looking at locks.
      CONTINUE WHEN EXISTS (SELECT 1 FROM {schema}.locks l WHERE l.flow_id = v_candidate.flow_id AND l.name = ANY(v_lock_names));
      INSERT INTO {schema}.locks (flow_id, name, execution_id)
        SELECT v_candidate.flow_id, lock_name, v_candidate.execution_id FROM unnest(v_lock_names) AS lock_name;
    END IF;
    UPDATE {schema}.executions SET
      claimed_by = p_worker_id,
      lease_token = lease_token + 1,
      attempt = attempt + 1,
      execute_claims = execute_claims + CASE WHEN status = 'ready' THEN 1 ELSE 0 END,
      deadline_at = p_now + v_timeout,
      lease_expires_at = CASE WHEN v_heartbeat IS NULL THEN p_now + v_timeout ELSE LEAST(p_now + v_timeout, p_now + v_heartbeat) END
    WHERE flow_id = v_candidate.flow_id AND execution_id = v_candidate.execution_id
    RETURNING * INTO v_claimed;
    v_count := v_count + 1;
    -- A Step type with a static selection (the entry's fifth element): its loads and the movement's,
    -- read here under the claim's locks; a movement option jsonb cannot hold leaves them to the Worker.
    v_loads := NULL;
    IF jsonb_typeof(v_entry -> 4) = 'array' AND (v_candidate.movement_options IS NULL OR position('\\u0000' IN v_candidate.movement_options) = 0) THEN
      v_loads := (v_entry -> 4) || CASE WHEN v_candidate.movement_options IS NULL THEN '[]'::jsonb
        ELSE coalesce(v_candidate.movement_options::jsonb -> 'load', '[]'::jsonb) END;
    END IF;
    v_claims := v_claims || jsonb_build_array(jsonb_build_object(
      'execution', to_jsonb(v_claimed),
      'attributes', (SELECT coalesce(jsonb_agg(jsonb_build_array(a.name, a.value)), '[]'::jsonb)
                     FROM {schema}.attributes a WHERE a.flow_id = v_candidate.flow_id AND a.key = ''))
      || CASE WHEN v_loads IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('loaded', {schema}.perdure_read_loads(v_candidate.flow_id, v_loads)) END);
  END LOOP;
  RETURN jsonb_build_object('claims', v_claims, 'stopped', v_stopped, 'skipped', v_visible > v_locked);
END
$function$;
`,
};
