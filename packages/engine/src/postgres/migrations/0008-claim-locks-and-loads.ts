/**
 * Migration 0008: `perdure_claim_plain` once more (0002's stays as it
 * shipped). The one-request claim, alone or at the end of a Step commit,
 * now also takes tasks of Step methods that hold locks or select loads,
 * when the catalog says so. An entry of three or more elements,
 * `[timeoutMs, heartbeatTimeoutMs, lockNames, loads]`, comes from a Worker
 * that knows this function:
 *
 * - its lock names are taken as the general claim takes them: under the
 *   Flow row's lock, a task whose locks another execution holds is skipped
 *   (the claim goes on with the next one), else the locks are inserted;
 * - a task whose Step type selects loads, or whose movement options are
 *   only a load selection (which changes nothing the claim decides), is
 *   claimed with the plain Attributes as before; the Worker reads the
 *   selected Attributes after the claim, in a read of its own.
 *
 * Two-element entries mean what they meant under 0002, so a Worker of the
 * previous version, whose catalog lists only plain methods, claims exactly
 * as before. A Worker sends longer entries only to a schema with this
 * migration (`PostgresOneRequest.claimsLocksAndLoads`). As under the general
 * claim, a few spare candidates stand in for tasks skipped for busy locks.
 * docs/decisions/2026-12-06-one-request-claims-take-locks-and-loads.md
 */
import type { Migration } from "./migration.ts";

const claimableWhere = `e.claimed_by IS NULL AND e.status IN ('asking', 'ready') AND e.available_at <= p_now AND e.flow_type = ANY(p_flow_types)
      AND (e.expires_at IS NULL OR e.expires_at > p_now)`;

export const claimLocksAndLoadsMigration: Migration = {
  name: "0008_claim_locks_and_loads",
  sql: `
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
    v_claims := v_claims || jsonb_build_array(jsonb_build_object(
      'execution', to_jsonb(v_claimed),
      'attributes', (SELECT coalesce(jsonb_agg(jsonb_build_array(a.name, a.value)), '[]'::jsonb)
                     FROM {schema}.attributes a WHERE a.flow_id = v_candidate.flow_id AND a.key = '')));
  END LOOP;
  RETURN jsonb_build_object('claims', v_claims, 'stopped', v_stopped, 'skipped', v_visible > v_locked);
END
$function$;
`,
};
