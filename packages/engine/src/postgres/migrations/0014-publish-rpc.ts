/**
 * Migration 0014: an RPC that only publishes is one request
 * (`perdure_publish_rpc`), and `perdure_claim_plain` once more (0010's stays
 * as it shipped) with a guard 0010 lacked.
 *
 * - `perdure_publish_rpc` runs what `invokeRpc`'s transaction runs for an
 *   RPC whose plan is publishes (`RpcSpec.publishes`, such as the agent's
 *   `send_user_message`): it locks the Flow row, publishes each message at
 *   the Flow's next sequence number, matches every waiting execution of the
 *   Flow oldest first (`perdure_match_wait` of 0011, queued at `now` as an
 *   RPC queues), moves the Flow's counter and trims history as
 *   `FlowTransaction.close`. It commits only in the usual case and answers
 *   `fallback`, having written nothing, when the Flow is missing, of another
 *   type or not running, when one of the RPC's locks is held, when the
 *   plan's `room` (a bound on the messages waiting in some Channels) does
 *   not hold, or when a waiting execution needs the general path (movement
 *   options, or conditions jsonb cannot hold, as in 0009). The engine then
 *   runs the RPC's handler in a transaction, which refuses or commits as it
 *   always did.
 * - `perdure_claim_plain`: 0010 cast a candidate's `movement_options` to
 *   jsonb with no guard, so a movement option holding U+0000 or a lone
 *   surrogate (a load key cut inside an emoji) made the claim statement
 *   fail, for every task of the Worker. Such options now stop the claim, and
 *   the general claim takes the task, as for any option the claim cannot
 *   decide on.
 * docs/decisions/2026-12-07-publish-rpcs-in-one-request.md
 */
import type { Migration } from "./migration.ts";

const claimableWhere = `e.claimed_by IS NULL AND e.status IN ('asking', 'ready') AND e.available_at <= p_now AND e.flow_type = ANY(p_flow_types)
      AND (e.expires_at IS NULL OR e.expires_at > p_now)`;

export const publishRpcMigration: Migration = {
  name: "0014_publish_rpc",
  sql: `
-- An RPC's publishes in one statement (see the header). The request p:
--   flowId, flowType, now, historyKeep;
--   locks: the RPC's lock names (fallback while one is held);
--   publishes: [[channel, stored key, value JSON text], ...], published in order;
--   readyTotals: each Step type's execute retry window (null: none), for the waits that become ready;
--   room (or null): {channels: [[channel, stored key], ...], maxMessages, maxBytes, field}: publish only
--     while those Channels' messages plus the new ones number at most maxMessages and the UTF-8 bytes of
--     their top-level string field named by field (new ones included) total at most maxBytes.
-- Reply: {outcome: 'published', messageIds, readied} or {outcome: 'fallback'}.
CREATE OR REPLACE FUNCTION {schema}.perdure_publish_rpc(p jsonb)
RETURNS jsonb LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_flow_id text := p ->> 'flowId';
  v_now bigint := (p ->> 'now')::bigint;
  v_keep bigint := (p ->> 'historyKeep')::bigint;
  v_room jsonb := CASE WHEN jsonb_typeof(p -> 'room') = 'object' THEN p -> 'room' END;
  v_field text := p -> 'room' ->> 'field';
  v_status text;
  v_flow_type text;
  v_next_seq bigint;
  v_seq bigint;
  v_count bigint;
  v_bytes bigint;
  v_publish jsonb;
  v_ids text[] := '{}';
  v_id text;
  v_waiting record;
  v_matched integer;
  v_readied boolean := false;
BEGIN
  -- FlowTransaction.open: the Flow row's lock, taken first as every change to a Flow takes it.
  SELECT f.status, f.flow_type, f.next_seq INTO v_status, v_flow_type, v_next_seq
    FROM {schema}.flows f WHERE f.flow_id = v_flow_id FOR UPDATE;
  IF NOT FOUND OR v_flow_type <> p ->> 'flowType' OR v_status <> 'running' THEN
    RETURN jsonb_build_object('outcome', 'fallback');
  END IF;
  IF jsonb_array_length(coalesce(p -> 'locks', '[]'::jsonb)) > 0 AND EXISTS (SELECT 1 FROM {schema}.locks l
      WHERE l.flow_id = v_flow_id AND l.name IN (SELECT jsonb_array_elements_text(p -> 'locks'))) THEN
    RETURN jsonb_build_object('outcome', 'fallback');
  END IF;
  IF v_room IS NOT NULL THEN
    -- A stored message jsonb cannot read (U+0000, a lone surrogate), or whose field is not a string: the handler measures it.
    IF current_setting('server_encoding') <> 'UTF8' OR EXISTS (SELECT 1 FROM {schema}.messages m
        JOIN jsonb_array_elements(v_room -> 'channels') AS c(channel) ON m.channel = c.channel ->> 0 AND m.key = c.channel ->> 1
        WHERE m.flow_id = v_flow_id AND (position('\\u0000' IN m.value) > 0 OR m.value ~ '\\\\u[dD][89a-fA-F]')) THEN
      RETURN jsonb_build_object('outcome', 'fallback');
    END IF;
    SELECT count(*), sum(CASE WHEN jsonb_typeof(m.value::jsonb -> v_field) = 'string' THEN octet_length(m.value::jsonb ->> v_field) END),
        count(*) FILTER (WHERE jsonb_typeof(m.value::jsonb -> v_field) IS DISTINCT FROM 'string')
      INTO v_count, v_bytes, v_matched
      FROM {schema}.messages m
      JOIN jsonb_array_elements(v_room -> 'channels') AS c(channel) ON m.channel = c.channel ->> 0 AND m.key = c.channel ->> 1
      WHERE m.flow_id = v_flow_id;
    IF v_matched > 0 OR EXISTS (SELECT 1 FROM jsonb_array_elements(p -> 'publishes') AS n(publish)
        WHERE jsonb_typeof((n.publish ->> 2)::jsonb -> v_field) IS DISTINCT FROM 'string') THEN
      RETURN jsonb_build_object('outcome', 'fallback');
    END IF;
    v_count := v_count + jsonb_array_length(p -> 'publishes');
    v_bytes := coalesce(v_bytes, 0) + (SELECT coalesce(sum(octet_length((n.publish ->> 2)::jsonb ->> v_field)), 0)
      FROM jsonb_array_elements(p -> 'publishes') AS n(publish));
    IF v_count > (v_room ->> 'maxMessages')::bigint OR v_bytes > (v_room ->> 'maxBytes')::bigint THEN
      RETURN jsonb_build_object('outcome', 'fallback');
    END IF;
  END IF;
  -- As 0009: a wait the publishes may complete whose retry window depends on its movement options, or
  -- whose conditions jsonb cannot hold, is matched by the general path.
  IF EXISTS (SELECT 1 FROM {schema}.executions w WHERE w.flow_id = v_flow_id AND w.status = 'waiting'
      AND w.conditions IS NOT NULL AND (w.movement_options IS NOT NULL OR position('\\u0000' IN w.conditions) > 0
        OR w.conditions ~ '\\\\u[dD][89a-fA-F]'
        OR NOT (coalesce(p -> 'readyTotals', '{}'::jsonb) ? w.step_type))) THEN
    RETURN jsonb_build_object('outcome', 'fallback');
  END IF;
  -- FlowTransaction.publish: the message ID leads with the zero-padded sequence number.
  v_seq := v_next_seq;
  FOR v_publish IN SELECT value FROM jsonb_array_elements(p -> 'publishes') LOOP
    v_id := CASE WHEN length(v_seq::text) < 12 THEN lpad(v_seq::text, 12, '0') ELSE v_seq::text END || '-' || v_now::text;
    INSERT INTO {schema}.messages (flow_id, seq, channel, key, message_id, value, published_at)
      VALUES (v_flow_id, v_seq, v_publish ->> 0, v_publish ->> 1, v_id, v_publish ->> 2, v_now);
    v_ids := v_ids || v_id;
    v_seq := v_seq + 1;
  END LOOP;
  -- FlowTransaction.matchWaitsIfTouched: every waiting execution of the Flow, oldest first, queued at now.
  IF v_seq <> v_next_seq THEN
    FOR v_waiting IN SELECT w.execution_id, w.step_type, w.conditions FROM {schema}.executions w
        WHERE w.flow_id = v_flow_id AND w.status = 'waiting' ORDER BY w.seq LOOP
      CONTINUE WHEN v_waiting.conditions IS NULL;
      v_matched := {schema}.perdure_match_wait(v_flow_id, v_waiting.execution_id, v_waiting.conditions::jsonb, v_now,
        v_now + (p -> 'readyTotals' ->> v_waiting.step_type)::bigint, v_now, v_now);
      IF v_matched >= 0 THEN
        v_readied := true;
      END IF;
    END LOOP;
    -- FlowTransaction.close: the counter, and history trimmed when the sequence crosses a multiple of 64.
    UPDATE {schema}.flows SET next_seq = v_seq, updated_at = v_now WHERE flow_id = v_flow_id;
    IF v_keep > 0 AND v_seq / 64 <> v_next_seq / 64 THEN
      DELETE FROM {schema}.history WHERE flow_id = v_flow_id
        AND seq <= (SELECT h.seq FROM {schema}.history h WHERE h.flow_id = v_flow_id ORDER BY h.seq DESC LIMIT 1 OFFSET v_keep);
    END IF;
  END IF;
  RETURN jsonb_build_object('outcome', 'published', 'messageIds', to_jsonb(v_ids), 'readied', v_readied);
END
$function$;

-- 0010's perdure_read_loads in PL/pgSQL: as an SQL function called from the claim's expression it was
-- not inlined, so its query was parsed and planned again on every claim that read loads; PL/pgSQL keeps
-- the plan for the connection. Same query, same result.
CREATE OR REPLACE FUNCTION {schema}.perdure_read_loads(p_flow_id text, p_loads jsonb)
RETURNS jsonb LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $function$
DECLARE
  v_loaded jsonb;
BEGIN
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
    INTO v_loaded
    FROM jsonb_array_elements(p_loads) WITH ORDINALITY AS l(load, position);
  RETURN v_loaded;
END
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
    -- Movement options that change nothing the claim decides: a load selection alone. Options jsonb
    -- cannot hold (U+0000, or a lone surrogate escaped as \\uD8xx) are not cast: the general claim takes them.
    IF v_candidate.movement_options IS NOT NULL AND NOT (jsonb_array_length(coalesce(v_entry, '[]'::jsonb)) >= 3
        AND position('\\u0000' IN v_candidate.movement_options) = 0 AND v_candidate.movement_options !~ '\\\\u[dD][89a-fA-F]'
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
    -- read here under the claim's locks.
    v_loads := NULL;
    -- (Options that reach here are castable: the check above let only those through.) An empty list
    -- (a Step type whose selection is a function) reads the movement's loads, when it has options.
    IF jsonb_typeof(v_entry -> 4) = 'array' AND (jsonb_array_length(v_entry -> 4) > 0 OR v_candidate.movement_options IS NOT NULL) THEN
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
