/**
 * Migration 0022: `perdure_publish_rpc_claiming`, a publish RPC that claims
 * for a Worker in the caller's process.
 *
 * When the Client that calls the RPC shares its store with a Worker that
 * hosts the Flow type and has a slot free, the RPC's own transaction claims
 * for that Worker what the publishes readied (`perdure_claim_plain` of 0019,
 * limit one, oldest first as every claim), and its reply carries the claim.
 * The Worker runs the task as soon as the reply comes back, where it used to
 * hear the wake-up and claim in a request of its own: one request and one
 * WAL flush fewer on the way from a user's message to the turn's first Step.
 *
 * The NOTIFY for the readied task goes only when the claim left something
 * claimable (or claimed nothing, or stopped at a task the general claim must
 * take): Workers elsewhere would find nothing. A null channel sends none.
 * docs/decisions/2026-12-07-rpc-claims-for-a-local-worker.md
 */
import type { Migration } from "./migration.ts";

export const publishRpcClaimingMigration: Migration = {
  name: "0022_publish_rpc_claiming",
  sql: `
-- p as perdure_publish_rpc's; the claim as perdure_claim_plain's, for one task. The reply is the publish
-- RPC's with, when a wait became ready, 'claimed' (the claim's reply) and 'notified' (whether it sent the NOTIFY).
-- No plan_cache_mode setting: it would hold for the claim too, which keeps the server's default.
CREATE OR REPLACE FUNCTION {schema}.perdure_publish_rpc_claiming(p jsonb, p_channel text, p_payload text,
  p_worker_id text, p_flow_types text[], p_catalog jsonb)
RETURNS jsonb LANGUAGE plpgsql AS $function$
DECLARE
  v_reply jsonb;
  v_claimed jsonb;
  v_notified boolean;
BEGIN
  v_reply := {schema}.perdure_publish_rpc(p);
  IF (v_reply ->> 'readied')::boolean IS NOT TRUE THEN
    RETURN v_reply;
  END IF;
  v_claimed := {schema}.perdure_claim_plain(p_worker_id, p_flow_types, p_catalog, 1, (p ->> 'now')::bigint);
  v_notified := p_channel IS NOT NULL AND NOT (jsonb_array_length(v_claimed -> 'claims') = 1
    AND (v_claimed ->> 'more')::boolean IS FALSE AND (v_claimed ->> 'stopped')::boolean IS FALSE);
  IF v_notified THEN
    PERFORM pg_notify(p_channel, p_payload);
  END IF;
  RETURN v_reply || jsonb_build_object('claimed', v_claimed, 'notified', v_notified);
END
$function$;
`,
};
