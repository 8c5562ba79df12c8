/**
 * Migration 0015: `perdure_match_wait` counts a Timer that is due at the
 * commit's time as fired, whether or not a Worker has fired it yet, as
 * `FlowTransaction.tryCompleteWait` does. Before, a message published after
 * a Timer fell due (or after `client.skipTimer` made it due) won an any-of
 * wait whenever the commit that published it came before a Worker's next
 * look at its Timers: a steer that landed just after a `durable_wait`'s
 * Timer fell due recorded the call as not run.
 * docs/decisions/2026-12-07-a-due-timer-wins-its-wait.md
 *
 * Both signatures change: the 7-argument one (0011's, which today's
 * `perdure_commit_step` and 0014's `perdure_publish_rpc` call) gets 0011's body with the one clause changed;
 * the 5-argument one (0009's, which only a process older than 0011 calls)
 * becomes that one queued at `now`, as 0009's queued it. Each repeats
 * 0012's `plan_cache_mode` setting, since `CREATE OR REPLACE` replaces it.
 */
import type { Migration } from "./migration.ts";

export const dueTimerWinsMigration: Migration = {
  name: "0015_due_timer_wins",
  sql: `
-- FlowTransaction.tryCompleteWait for one waiting execution (0011's body; a Timer due at p_now counts as fired).
CREATE OR REPLACE FUNCTION {schema}.perdure_match_wait(p_flow_id text, p_execution_id text, p_conditions jsonb, p_now bigint, p_expires_at bigint,
  p_available_at bigint, p_scheduled_at bigint)
RETURNS integer LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $function$
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
    v_fired := ARRAY(SELECT t.timer_id FROM {schema}.timers t WHERE t.flow_id = p_flow_id AND t.execution_id = p_execution_id
      AND (t.fired OR t.due_at <= p_now));
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

-- 0009's signature: the same match, queued at now.
CREATE OR REPLACE FUNCTION {schema}.perdure_match_wait(p_flow_id text, p_execution_id text, p_conditions jsonb, p_now bigint, p_expires_at bigint)
RETURNS integer LANGUAGE sql SET plan_cache_mode = force_generic_plan AS $function$
  SELECT {schema}.perdure_match_wait(p_flow_id, p_execution_id, p_conditions, p_now, p_expires_at, p_now, p_now);
$function$;
`,
};
