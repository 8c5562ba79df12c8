import type { ClientBase } from "pg";
import type { Migration } from "./migration.ts";
import { commitHandoverFunctionMigration } from "./0004-commit-step-handover.ts";
import { compactHandoverFunctionMigration } from "./0005-commit-step-compact-handover.ts";
import { handoverInPlaceFunctionMigration } from "./0006-commit-step-handover-in-place.ts";
import { appendStreamFunctionMigration } from "./0007-append-stream.ts";
import { appendStreamsFunctionMigration } from "./0013-append-streams.ts";
import { claimLocksAndLoadsMigration } from "./0008-claim-locks-and-loads.ts";
import { commitWaitsAndPublishesMigration } from "./0009-commit-step-waits-and-publishes.ts";
import { claimReadsLoadsMigration } from "./0010-claim-reads-loads.ts";
import { commitStepChainPlaceMigration } from "./0011-commit-step-chain-place.ts";
import { commitFunctionsGenericPlansMigration } from "./0012-commit-functions-generic-plans.ts";
import { publishRpcMigration } from "./0014-publish-rpc.ts";
import { dueTimerWinsMigration } from "./0015-due-timer-wins.ts";
import { appendStreamsByRunMigration } from "./0016-append-streams-by-run.ts";
import { commitStepAttributeWritesMigration } from "./0017-commit-step-attribute-writes.ts";
import { plainAttributesIndexMigration } from "./0018-plain-attributes-index.ts";
import { claimReportsMoreMigration } from "./0019-claim-reports-more.ts";
import { commitStreamsMigration } from "./0020-commit-streams.ts";
import { streamBatchesAndRpcWakesMigration } from "./0021-stream-batches-and-rpc-wakes.ts";
import { publishRpcClaimingMigration } from "./0022-publish-rpc-claiming.ts";
import { leanerClaimsAndCommitsMigration } from "./0023-leaner-claims-and-commits.ts";
import { leanCommitFunctionMigration } from "./0003-lean-commit-step.ts";
import { oneRequestFunctionsMigration } from "./0002-one-request-functions.ts";

export type { Migration } from "./migration.ts";

/**
 * The PostgreSQL schema, as ordered migrations. Every table leads with the
 * flow ID except the process-wide ones (meta, workers, stream usage per Flow
 * type), so the Flow tables can be distributed by flow ID. Identifier columns
 * use the "C" collation so ordering is by bytes, as in SQLite.
 */
export const postgresMigrations: readonly Migration[] = [
  {
    name: "0001_initial",
    sql: `
CREATE TABLE {schema}.meta (key TEXT COLLATE "C" PRIMARY KEY, value BYTEA NOT NULL);
CREATE TABLE {schema}.flows (
  flow_id TEXT COLLATE "C" PRIMARY KEY,
  flow_type TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL,
  input TEXT NOT NULL,
  output TEXT,
  error TEXT,
  request_id TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  next_seq BIGINT NOT NULL
);
CREATE INDEX flows_by_type ON {schema}.flows (flow_type, status, flow_id);
CREATE TABLE {schema}.attributes (
  flow_id TEXT COLLATE "C" NOT NULL,
  name TEXT COLLATE "C" NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (flow_id, name, key)
);
CREATE TABLE {schema}.messages (
  flow_id TEXT COLLATE "C" NOT NULL,
  seq BIGINT NOT NULL,
  channel TEXT COLLATE "C" NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  message_id TEXT COLLATE "C" NOT NULL,
  value TEXT NOT NULL,
  published_at BIGINT NOT NULL,
  PRIMARY KEY (flow_id, seq)
);
CREATE INDEX messages_by_channel ON {schema}.messages (flow_id, channel, key, seq);
CREATE UNIQUE INDEX messages_by_id ON {schema}.messages (flow_id, message_id);
CREATE TABLE {schema}.executions (
  flow_id TEXT COLLATE "C" NOT NULL,
  execution_id TEXT COLLATE "C" NOT NULL,
  seq BIGINT NOT NULL,
  flow_type TEXT COLLATE "C" NOT NULL,
  step_type TEXT COLLATE "C" NOT NULL,
  input TEXT NOT NULL,
  status TEXT COLLATE "C" NOT NULL,
  claimed_by TEXT COLLATE "C",
  lease_token BIGINT NOT NULL,
  lease_expires_at BIGINT,
  deadline_at BIGINT,
  available_at BIGINT NOT NULL,
  attempt BIGINT NOT NULL,
  execute_claims BIGINT NOT NULL,
  scheduled_at BIGINT NOT NULL,
  expires_at BIGINT,
  conditions TEXT,
  wait_result TEXT,
  checkpoint TEXT,
  movement_options TEXT,
  recovery_error TEXT,
  last_error TEXT,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (flow_id, execution_id)
);
CREATE INDEX executions_queued ON {schema}.executions (available_at, flow_id, seq) WHERE claimed_by IS NULL AND status IN ('asking', 'ready');
CREATE INDEX executions_by_status ON {schema}.executions (flow_id, status, seq);
CREATE INDEX executions_claimed ON {schema}.executions (claimed_by) WHERE claimed_by IS NOT NULL;
CREATE INDEX executions_expiring ON {schema}.executions (expires_at) WHERE claimed_by IS NULL AND expires_at IS NOT NULL AND status IN ('asking', 'ready');
CREATE TABLE {schema}.locks (
  flow_id TEXT COLLATE "C" NOT NULL,
  name TEXT COLLATE "C" NOT NULL,
  execution_id TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (flow_id, name)
);
CREATE TABLE {schema}.timers (
  flow_id TEXT COLLATE "C" NOT NULL,
  flow_type TEXT COLLATE "C" NOT NULL,
  execution_id TEXT COLLATE "C" NOT NULL,
  timer_id TEXT COLLATE "C" NOT NULL,
  due_at BIGINT NOT NULL,
  fired BOOLEAN NOT NULL,
  PRIMARY KEY (flow_id, execution_id, timer_id)
);
CREATE INDEX timers_due ON {schema}.timers (due_at, flow_type) WHERE NOT fired;
CREATE INDEX timers_by_id ON {schema}.timers (flow_id, timer_id);
CREATE TABLE {schema}.history (
  flow_id TEXT COLLATE "C" NOT NULL,
  seq BIGINT NOT NULL,
  execution_id TEXT COLLATE "C" NOT NULL,
  step_type TEXT COLLATE "C" NOT NULL,
  method TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL,
  attempt BIGINT NOT NULL,
  started_at BIGINT NOT NULL,
  finished_at BIGINT NOT NULL,
  outcome TEXT,
  error TEXT,
  PRIMARY KEY (flow_id, seq)
);
CREATE TABLE {schema}.workers (worker_id TEXT COLLATE "C" PRIMARY KEY, expires_at BIGINT NOT NULL);
CREATE TABLE {schema}.stream_heads (
  flow_id TEXT COLLATE "C" NOT NULL,
  stream TEXT COLLATE "C" NOT NULL,
  last_index BIGINT NOT NULL,
  PRIMARY KEY (flow_id, stream)
);
CREATE TABLE {schema}.stream_messages (
  flow_id TEXT COLLATE "C" NOT NULL,
  stream TEXT COLLATE "C" NOT NULL,
  idx BIGINT NOT NULL,
  id BIGINT GENERATED ALWAYS AS IDENTITY,
  flow_type TEXT COLLATE "C" NOT NULL,
  value TEXT NOT NULL,
  bytes BIGINT NOT NULL,
  written_at BIGINT NOT NULL,
  PRIMARY KEY (flow_id, stream, idx)
);
CREATE INDEX stream_messages_by_type ON {schema}.stream_messages (flow_type, stream, id);
CREATE TABLE {schema}.stream_usage (
  flow_type TEXT COLLATE "C" NOT NULL,
  stream TEXT COLLATE "C" NOT NULL,
  bytes BIGINT NOT NULL,
  PRIMARY KEY (flow_type, stream)
);
`,
  },
  oneRequestFunctionsMigration,
  leanCommitFunctionMigration,
  commitHandoverFunctionMigration,
  compactHandoverFunctionMigration,
  handoverInPlaceFunctionMigration,
  appendStreamFunctionMigration,
  claimLocksAndLoadsMigration,
  commitWaitsAndPublishesMigration,
  claimReadsLoadsMigration,
  commitStepChainPlaceMigration,
  commitFunctionsGenericPlansMigration,
  appendStreamsFunctionMigration,
  publishRpcMigration,
  dueTimerWinsMigration,
  appendStreamsByRunMigration,
  commitStepAttributeWritesMigration,
  plainAttributesIndexMigration,
  claimReportsMoreMigration,
  commitStreamsMigration,
  streamBatchesAndRpcWakesMigration,
  publishRpcClaimingMigration,
  leanerClaimsAndCommitsMigration,
];

/** Two-key advisory lock namespace of perdure migrations ("perd" in ASCII). */
const migrationLockKey = 0x70657264;

/**
 * Applies the migrations `client`'s database lacks, in order, in one
 * transaction. An advisory lock on the schema name makes processes that start
 * at once take turns: the first applies, the others find nothing left to do.
 * Returns the names it applied.
 */
export async function applyMigrations(client: ClientBase, schema: string, quotedSchema: string, migrations: readonly Migration[] = postgresMigrations): Promise<string[]> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [migrationLockKey, schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quotedSchema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${quotedSchema}.schema_migrations (
      name TEXT COLLATE "C" PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const applied = new Set((await client.query<{ name: string }>(`SELECT name FROM ${quotedSchema}.schema_migrations`)).rows.map((row) => row.name));
    const known = new Set(migrations.map((migration) => migration.name));
    const unknown = [...applied].filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new Error(
        `PostgreSQL schema ${schema} has migration ${unknown.sort().join(", ")}, which this version of @perdure/engine does not know: upgrade @perdure/engine`,
      );
    }
    const appliedNow: string[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.name)) continue;
      await client.query(migration.sql.replaceAll("{schema}", quotedSchema));
      await client.query(`INSERT INTO ${quotedSchema}.schema_migrations (name) VALUES ($1)`, [migration.name]);
      appliedNow.push(migration.name);
    }
    await client.query("COMMIT");
    return appliedNow;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}
