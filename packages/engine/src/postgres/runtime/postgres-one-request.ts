/**
 * The PostgreSQL store's one-request Step commit and flow start: each is one
 * named prepared statement calling a function of migrations 0002–0011, sent
 * outside an explicit transaction, so the statement is the transaction.
 */
import pg from "pg";
import type { AttributeRow, ExecutionRow, FlowRow, MessageRow } from "../../store/store.ts";
import {
  claimCatalogKey,
  handoverLeaseTimesOf,
  leasedExecution,
  type ClaimCatalog,
  type FlowRead,
  type FlowStart,
  type FlowStartReply,
  type LeaseHeartbeat,
  type LeaseTimes,
  type LoadedSelection,
  type OneRequestOperations,
  type RpcPublish,
  type RpcPublishReply,
  type SelectedLoad,
  type SelectionRead,
  type StepCommit,
  type StepCommitReply,
  type StoreClaim,
  type StreamAppend,
  type TaskClaim,
  type TaskClaimReply,
} from "../../store/step-commit.ts";
import type { WakeEvent } from "../../store/store.ts";
import { decodeInstanceKey, encodeInstanceKey } from "./instance-key.ts";
import { streamBatchColumns } from "./postgres-streams.ts";
import { executionFieldColumns, executionFields, flowFieldColumns, flowFields, statementName } from "./postgres-columns.ts";
import { compactClaimColumns } from "../migrations/0023-leaner-claims-and-commits.ts";
import { StepCommitGroups, type StepCommitAnswer, type StepCommitGroupOptions } from "./step-commit-groups.ts";

/** Runs one statement on a pooled connection (with the store's clock reading riding along) and returns its first row. */
export type RunStatement = <TRow>(statement: { name: string; text: string }, values: unknown[]) => Promise<TRow>;

type ColumnRow = Record<string, unknown>;

/** The function sets a movement's Flow ID (and numbers it). */
const skippedMovementFields: ReadonlySet<string> = new Set(["flowId"]);

function columnsOf<TRow extends object>(row: TRow, columns: Record<string, string>, skip: ReadonlySet<string> = new Set()): ColumnRow {
  const converted: ColumnRow = {};
  for (const [field, value] of Object.entries(row)) {
    if (skip.has(field)) continue;
    const column = columns[field];
    if (column === undefined) throw new Error(`no column for field ${field}`);
    converted[column] = value;
  }
  return converted;
}

/** A row of `to_jsonb(table)`, its columns named as the Store contract's fields. */
function rowOf<TRow>(columns: ColumnRow, fields: readonly (keyof TRow & string)[], fieldColumns: Record<keyof TRow & string, string>): TRow {
  const row: Record<string, unknown> = {};
  for (const field of fields) row[field] = columns[fieldColumns[field]] ?? null;
  return row as TRow;
}

const plainAttributesOf = (attributes: [string, string][]): AttributeRow[] => attributes.map(([name, value]) => ({ name, key: "", value }));

const executionOf = (columns: ColumnRow): ExecutionRow => rowOf<ExecutionRow>(columns, executionFields, executionFieldColumns);

const fieldOfColumn = new Map(Object.entries(executionFieldColumns).map(([field, column]) => [column, field]));
/** The Store contract's field of each value of a compact claim's row (migration 0023), in the reply's order. */
const compactClaimFields: readonly string[] = compactClaimColumns.map((column) => {
  const field = fieldOfColumn.get(column);
  if (field === undefined) throw new Error(`migration 0023 sends column ${column}, which no execution field names`);
  return field;
});

/** A row of a compact claim (migration 0023): the execution's column values in `compactClaimColumns`' order. */
function executionOfValues(values: readonly unknown[]): ExecutionRow {
  const row: Record<string, unknown> = {};
  for (const [index, field] of compactClaimFields.entries()) row[field] = values[index] ?? null;
  return row as unknown as ExecutionRow;
}

/** A claim of migration 0023's reply: [row values, plain Attributes, loads read or null]. */
type CompactClaim = [values: unknown[], attributes: [string, string][], loaded: unknown[] | null];
/** A claim of 0019's reply (and of a process's schema without 0023). */
interface KeyedClaim { execution: ColumnRow; attributes: [string, string][]; loaded?: unknown[] }
const flowOf = (columns: ColumnRow): FlowRow => rowOf<FlowRow>(columns, flowFields, flowFieldColumns);

interface ClaimedReply {
  /**
   * `loaded` (migration 0011): what the claim read of the task's selection, as `perdure_read_loads` returns it.
   * Arrays from `perdure_claim_compact` (migration 0023).
   */
  claims: (KeyedClaim | CompactClaim)[];
  stopped: boolean;
  skipped: boolean;
  /** Migration 0019: whether the claim saw claimable tasks beyond those it took. */
  more?: boolean;
}

/** The short reply to a handover (migrations 0005 and 0006): the new Step's sequence number and the Flow's plain Attributes. */
interface HandedReply {
  seq: number;
  attributes: [string, string][];
}

/**
 * The request `perdure_commit_step` takes for `commit`, as JSON. `handover`
 * is the new Step's lease times when the commit's claim could take that
 * Step alone (see `handoverLeaseTimesOf`), else undefined.
 */
export function commitRequestOf(commit: StepCommit, handover: LeaseTimes | undefined) {
  return {
    flowId: commit.flowId,
    executionId: commit.executionId,
    workerId: commit.workerId,
    leaseToken: commit.leaseToken,
    method: commit.method,
    now: commit.now,
    startedAt: commit.startedAt,
    writes: commit.writes.map((write) => [write.name, encodeInstanceKey(write.key), write.value]),
    movements: commit.movements.map((movement) => columnsOf(movement, executionFieldColumns, skippedMovementFields)),
    finish: commit.finish,
    ready: commit.ready,
    outcome: commit.outcome,
    historyKeep: commit.historyKeep,
    holdsLocks: commit.holdsLocks,
    claim: commit.claim === undefined ? null : { flowTypes: commit.claim.flowTypes, limit: commit.claim.limit },
    handover: handover === undefined ? null : [handover.timeoutMs, handover.heartbeatTimeoutMs],
    // Migration 0009's fields, sent only when used (a schema without it takes neither).
    ...(commit.wait === undefined || commit.wait === null ? {} : { wait: { conditions: commit.wait.conditions, flowType: commit.wait.flowType, expiresAt: commit.wait.expiresAt } }),
    ...(commit.publishes === undefined || commit.publishes.length === 0 ? {} : {
      publishes: commit.publishes.map((publish) => [publish.name, encodeInstanceKey(publish.key), publish.value]),
      readyTotals: commit.readyTotals ?? {},
    }),
    // Migration 0011's: where the waits the commit completes queue (a schema without it takes `now`).
    ...(commit.place === undefined ? {} : { place: [commit.place.availableAt, commit.place.scheduledAt] }),
  };
}

/** Each load's result as the engine reads it, from the JSON of a selection read (keys stored, so escaped). */
function decodeLoaded(loads: readonly SelectedLoad[], results: readonly unknown[]): LoadedSelection[] {
  return loads.map((load, index): LoadedSelection => {
    const result = results[index];
    switch (load.kind) {
      case "instance":
        return typeof result === "string" ? result : undefined;
      case "range":
        return ((result ?? []) as [string, string][]).map(([key, value]): AttributeRow => ({ name: load.name, key: decodeInstanceKey(key), value }));
      case "channel":
        return ((result ?? []) as [number, string, string, number][]).map(([seq, messageId, value, publishedAt]): MessageRow => (
          { seq, channel: load.name, key: load.key, messageId, value, publishedAt }));
    }
  });
}

/**
 * The loads a claim read for `execution` (migration 0011): its catalog
 * entry's static loads, then its movement's, in the order `perdure_claim_plain`
 * read them; undefined when the entry has none.
 */
function claimedLoadsOf(catalog: ClaimCatalog, execution: ExecutionRow): SelectedLoad[] | undefined {
  const entry = catalog[claimCatalogKey(execution.flowType, execution.stepType, execution.status === "asking" ? "asking" : "ready")];
  const staticLoads = entry?.[4];
  if (staticLoads === undefined || staticLoads === null) return undefined;
  const movement = execution.movementOptions === null ? [] : ((JSON.parse(execution.movementOptions) as { load?: SelectedLoad[] }).load ?? []);
  return [...staticLoads, ...movement];
}

/** The wake-ups of a batch of one Flow's Stream messages, once per Stream, with the NOTIFY channel and payload of each. */
function streamWakesOf(streams: OneRequestStreamServices, flowId: string, batch: readonly StreamAppend[]): { events: WakeEvent[]; wakes: { channel: string; payload: string }[] } {
  const events = [...new Set(batch.map((append) => append.stream))].map((stream): WakeEvent => ({ kind: "stream", flowId, stream }));
  return { events, wakes: events.map((event) => streams.wakePayload(event)) };
}

/**
 * A batch of one Flow's Stream messages as the array parameters of
 * `perdure_append_streams` and `perdure_heartbeat_streams` take them (the
 * batch's columns, then NOTIFY channels and payloads), with the wake-ups
 * they send.
 */
function streamParametersOf(streams: OneRequestStreamServices, flowId: string, batch: readonly StreamAppend[]): { parameters: unknown[]; events: WakeEvent[] } {
  const columns = streamBatchColumns(flowId, batch);
  const { events, wakes } = streamWakesOf(streams, flowId, batch);
  return { parameters: [...columns, wakes.map((wake) => wake.channel), wakes.map((wake) => wake.payload)], events };
}

/** What a one-request Stream append needs of its store besides the statement. */
export interface OneRequestStreamServices {
  /** The NOTIFY channel and payload that wake readers of `event` in other processes. */
  wakePayload(event: WakeEvent): { channel: string; payload: string };
  /** As {@link wakePayload}, for an event only Workers act on: undefined while no Worker of another process is alive. */
  workerWakePayload(event: WakeEvent): { channel: string; payload: string } | undefined;
  /** Tells this process's listeners (the NOTIFY reaches only the others). */
  wakeLocally(event: WakeEvent): void;
  /** The schema has migration 0013's `perdure_append_streams`. @default false */
  batches?: boolean;
}

/**
 * A heartbeat in one statement: the Flow row's lock first, as every change
 * to a Flow's rows takes it (see PostgresTransaction), then the lease and
 * the checkpoint. A heartbeat that stores no new checkpoint (or finds the
 * lease gone) commits without waiting for the WAL flush: losing it in a
 * server crash loses a lease extension only, which the Worker's next
 * heartbeat makes again. One that changes the checkpoint waits
 * (docs/decisions/2026-12-07-asynchronous-claims-and-heartbeats.md).
 * Parameters: flow ID, execution ID, Worker ID, lease token, now,
 * heartbeat timeout (or null), checkpoint (or null). Exported for its test.
 */
export function heartbeatStatementText(quotedSchema: string): string {
  return `WITH flow AS (SELECT flow_id FROM ${quotedSchema}.flows WHERE flow_id = $1 FOR UPDATE),
      extended AS (
        UPDATE ${quotedSchema}.executions e SET checkpoint = $7,
          lease_expires_at = CASE WHEN $6::bigint IS NULL THEN coalesce(e.deadline_at, $5::bigint) ELSE least(coalesce(e.deadline_at, $5::bigint), $5::bigint + $6::bigint) END
        FROM flow, ${quotedSchema}.executions previous
        WHERE e.flow_id = flow.flow_id AND e.execution_id = $2 AND e.claimed_by = $3 AND e.lease_token = $4
          AND previous.flow_id = e.flow_id AND previous.execution_id = e.execution_id
        RETURNING previous.checkpoint IS NOT DISTINCT FROM $7::text AS unchanged)
      SELECT count(*)::int AS held,
        CASE WHEN coalesce(bool_and(extended.unchanged), true) THEN set_config('synchronous_commit', 'off', true) END AS relaxed
      FROM extended`;
}

/**
 * A claim statement calling `claimFunction`, and the one whose commit does
 * not wait for the WAL flush, with the catalog as `catalog` (a parameter or
 * a constant) and the limit and time as the parameters from `limitIndex`.
 */
function claimStatementsOf(quotedSchema: string, claimFunction: string, catalog: string, limitIndex: number): { claim: { name: string; text: string }; relaxedClaim: { name: string; text: string } } {
  const call = `${quotedSchema}.${claimFunction}($1, $2::text[], ${catalog}, $${limitIndex}, $${limitIndex + 1}) AS reply`;
  const claimText = `SELECT ${call}`;
  const relaxedClaimText = `SELECT ${call},
      set_config('synchronous_commit', 'off', true) AS relaxed`;
  return { claim: { name: statementName(claimText), text: claimText }, relaxedClaim: { name: statementName(relaxedClaimText), text: relaxedClaimText } };
}

/** The statements that carry one claim catalog as a constant. */
interface CatalogStatements {
  commit: { name: string; text: string };
  group: { name: string; text: string };
  /** With migration 0020: a commit, and a group, that carry Stream messages. */
  commitStreams: { name: string; text: string };
  groupStreams: { name: string; text: string };
  claim: { name: string; text: string };
  relaxedClaim: { name: string; text: string };
  /** With migration 0022: a publish RPC that claims for a local Worker. */
  publishClaiming: { name: string; text: string };
}

/** How many catalogs get statements of their own; a process has one per Worker. */
const maxCatalogStatements = 16;

/** Step commits, flow starts, Stream appends and heartbeats in one round trip each, on the functions of migrations 0002–0006. */
export class PostgresOneRequest implements OneRequestOperations {
  private readonly run: RunStatement;
  private readonly commitStatement: { name: string; text: string };
  private readonly startStatement: { name: string; text: string };
  private claimStatement: { name: string; text: string };
  /** The claim whose commit does not wait for the WAL flush (see {@link relaxClaimCommits}). */
  private relaxedClaimStatement: { name: string; text: string };
  /** The claim function the Worker loop calls: 0019's, or 0023's compact one (see {@link enableCompactClaims}). */
  private claimFunction = "perdure_claim_plain";
  private compactClaims = false;
  private claimsRelaxed = false;

  /** Whether the loop's claims commit without waiting for the WAL flush ({@link relaxClaimCommits}). */
  get claimCommitsRelaxed(): boolean {
    return this.claimsRelaxed;
  }
  private readonly groupStatement: { name: string; text: string };
  private readonly commitStreamsStatement: { name: string; text: string };
  private readonly groupStreamsStatement: { name: string; text: string };
  private readonly streams: OneRequestStreamServices | undefined;
  private readonly heartbeatStreamsStatement: { name: string; text: string };
  private streamsInCommits = false;
  private wakesInRpcs = false;
  private rpcClaims = false;

  /** The schema has migration 0022: a publish RPC claims for a Worker of this process (see {@link enableRpcClaims}). */
  get claimsInRpcs(): boolean {
    return this.rpcClaims;
  }

  /** The schema has migration 0020: a Step commit appends its Stream messages (see {@link enableCommitStreams}). */
  get commitsStreams(): boolean {
    return this.streamsInCommits;
  }
  private readonly readStatement: { name: string; text: string };
  private readonly appendStatement: { name: string; text: string };
  private readonly attributesStatement: { name: string; text: string };
  private readonly heartbeatStatement: { name: string; text: string };
  private readonly selectionStatement: { name: string; text: string };
  private readonly publishStatement: { name: string; text: string };
  private readonly publishWakingStatement: { name: string; text: string };
  private readonly publishClaimingStatement: { name: string; text: string };
  /** Present when the schema has migration 0007's `perdure_append_stream`. */
  readonly appendStream: ((append: StreamAppend) => Promise<number>) | undefined;
  /** Present when the schema has migration 0013's `perdure_append_streams`. */
  readonly appendStreams: ((batch: readonly StreamAppend[]) => Promise<number[]>) | undefined;
  private readonly appendBatchStatement: { name: string; text: string };
  private readonly groups: StepCommitGroups;
  private readonly onSkippedRows: () => void;
  /** The catalog's JSON text, made once per catalog (one per Worker). */
  private readonly catalogTexts = new WeakMap<ClaimCatalog, string>();
  /** The statements that carry a catalog as a constant, by the catalog's text (see {@link catalogStatementsOf}). */
  private readonly catalogStatements = new Map<string, CatalogStatements>();
  private readonly quotedSchema: string;

  /** The schema has migration 0008: claims take locks and tasks whose Step selects loads. */
  readonly claimsLocksAndLoads: boolean;
  /** The schema has migration 0009: a Step commit takes waits with conditions and publishes. */
  readonly commitsWaitsAndPublishes: boolean;
  /** The schema has migration 0011: a claim reads a task's static selection. */
  readonly claimsReadLoads: boolean;
  /** Present when the schema has migration 0014's `perdure_publish_rpc` (see {@link enablePublishRpc}). */
  publishRpc: ((request: RpcPublish) => Promise<RpcPublishReply>) | undefined;

  constructor(quotedSchema: string, run: RunStatement, onSkippedRows: () => void, groupOptions: StepCommitGroupOptions, streams: OneRequestStreamServices | undefined, claimsLocksAndLoads = false, commitsWaitsAndPublishes = false, claimsReadLoads = false) {
    this.run = run;
    this.quotedSchema = quotedSchema;
    this.claimsReadLoads = claimsReadLoads;
    this.claimsLocksAndLoads = claimsLocksAndLoads;
    this.commitsWaitsAndPublishes = commitsWaitsAndPublishes;
    this.onSkippedRows = onSkippedRows;
    const commitText = `SELECT ${quotedSchema}.perdure_commit_step($1::jsonb, $2::jsonb) AS reply`;
    const startText = `SELECT ${quotedSchema}.perdure_start_flow($1::jsonb, $2::jsonb) AS reply`;
    this.commitStatement = { name: statementName(commitText), text: commitText };
    this.startStatement = { name: statementName(startText), text: startText };
    ({ claim: this.claimStatement, relaxedClaim: this.relaxedClaimStatement } = claimStatementsOf(quotedSchema, this.claimFunction, "$3::jsonb", 4));
    const groupText = `SELECT ${quotedSchema}.perdure_commit_steps($1::jsonb, $2::jsonb) AS reply`;
    this.groupStatement = { name: statementName(groupText), text: groupText };
    const commitStreamsText = `SELECT ${quotedSchema}.perdure_commit_step_streams($1::jsonb, $2::jsonb) AS reply`;
    this.commitStreamsStatement = { name: statementName(commitStreamsText), text: commitStreamsText };
    const groupStreamsText = `SELECT ${quotedSchema}.perdure_commit_steps_streams($1::jsonb, $2::jsonb) AS reply`;
    this.groupStreamsStatement = { name: statementName(groupStreamsText), text: groupStreamsText };
    this.streams = streams;
    const heartbeatStreamsText = `SELECT ${quotedSchema}.perdure_heartbeat_streams($1, $2, $3, $4, $5, $6, $7, $8, $9::text[], $10::text[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $15::text[]) AS held`;
    this.heartbeatStreamsStatement = { name: statementName(heartbeatStreamsText), text: heartbeatStreamsText };
    // Two subqueries of one statement read one snapshot, so the executions belong to the Flow row read with them.
    const readText = `SELECT (SELECT to_jsonb(f) FROM ${quotedSchema}.flows f WHERE f.flow_id = $1) AS flow,
      (SELECT coalesce(jsonb_agg(to_jsonb(e) ORDER BY e.seq), '[]'::jsonb) FROM ${quotedSchema}.executions e WHERE e.flow_id = $1) AS executions`;
    this.readStatement = { name: statementName(readText), text: readText };
    // As readFlow: subqueries of one statement read one snapshot.
    const attributesText = `SELECT EXISTS (SELECT 1 FROM ${quotedSchema}.flows WHERE flow_id = $1) AS found,
      (SELECT coalesce(jsonb_agg(jsonb_build_array(a.name, a.key, a.value)), '[]'::jsonb) FROM ${quotedSchema}.attributes a
        JOIN unnest($2::text[], $3::text[]) AS slot(name, key) ON a.name = slot.name AND a.key = slot.key WHERE a.flow_id = $1) AS found_values`;
    this.attributesStatement = { name: statementName(attributesText), text: attributesText };
    const appendText = `SELECT ${quotedSchema}.perdure_append_stream($1, $2, $3, $4, $5, $6, $7, $8, $9) AS "index"`;
    this.appendStatement = { name: statementName(appendText), text: appendText };
    this.appendStream = streams === undefined ? undefined : (append) => this.appendOne(streams, append);
    const appendBatchText = `SELECT ${quotedSchema}.perdure_append_streams($1, $2, $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::text[], $9::text[]) AS indexes`;
    this.appendBatchStatement = { name: statementName(appendBatchText), text: appendBatchText };
    this.appendStreams = streams?.batches === true ? (batch) => this.appendBatch(streams, batch) : undefined;
    const heartbeatText = heartbeatStatementText(quotedSchema);
    this.heartbeatStatement = { name: statementName(heartbeatText), text: heartbeatText };
    // Subqueries of one statement read one snapshot. Each load reads as PostgresTransaction's
    // readAttribute, readAttributeRange and listMessages do; keys arrive stored (escaped).
    const selectionText = `SELECT (SELECT coalesce(jsonb_agg(jsonb_build_array(a.name, a.value)), '[]'::jsonb)
        FROM ${quotedSchema}.attributes a WHERE a.flow_id = $1 AND a.key = '') AS plain,
      (SELECT coalesce(jsonb_agg(CASE l.load ->> 'kind'
          WHEN 'instance' THEN (SELECT to_jsonb(a.value) FROM ${quotedSchema}.attributes a
            WHERE a.flow_id = $1 AND a.name = l.load ->> 'name' AND a.key = l.load ->> 'key')
          WHEN 'range' THEN (SELECT coalesce(jsonb_agg(jsonb_build_array(r.key, r.value) ORDER BY r.key), '[]'::jsonb) FROM (
            SELECT a.key, a.value FROM ${quotedSchema}.attributes a
            WHERE a.flow_id = $1 AND a.name = l.load ->> 'name' AND a.key > '' AND a.key >= l.load ->> 'fromKey'
              AND (l.load ->> 'toKey' IS NULL OR a.key < l.load ->> 'toKey')
            ORDER BY a.key LIMIT (l.load ->> 'limit')::bigint) r)
          ELSE (SELECT coalesce(jsonb_agg(jsonb_build_array(m.seq, m.message_id, m.value, m.published_at) ORDER BY m.seq), '[]'::jsonb)
            FROM ${quotedSchema}.messages m WHERE m.flow_id = $1 AND m.channel = l.load ->> 'name' AND m.key = l.load ->> 'key')
          END ORDER BY l.position), '[]'::jsonb)
        FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS l(load, position)) AS loaded`;
    this.selectionStatement = { name: statementName(selectionText), text: selectionText };
    const publishText = `SELECT ${quotedSchema}.perdure_publish_rpc($1::jsonb) AS reply`;
    this.publishStatement = { name: statementName(publishText), text: publishText };
    const publishWakingText = `SELECT ${quotedSchema}.perdure_publish_rpc_waking($1::jsonb, $2, $3) AS reply`;
    this.publishWakingStatement = { name: statementName(publishWakingText), text: publishWakingText };
    const publishClaimingText = `SELECT ${quotedSchema}.perdure_publish_rpc_claiming($1::jsonb, $2, $3, $4, $5::text[], $6::jsonb) AS reply`;
    this.publishClaimingStatement = { name: statementName(publishClaimingText), text: publishClaimingText };
    this.publishRpc = undefined;
    this.groups = new StepCommitGroups({
      single: async (request, catalogText) => {
        const withStreams = "streams" in request;
        const statements = this.catalogStatementsOf(catalogText);
        return statements === undefined
          ? (await this.run<{ reply: StepCommitAnswer }>(withStreams ? this.commitStreamsStatement : this.commitStatement, [JSON.stringify(request), catalogText])).reply
          : (await this.run<{ reply: StepCommitAnswer }>(withStreams ? statements.commitStreams : statements.commit, [JSON.stringify(request)])).reply;
      },
      group: async (requestsText, catalogTexts, withStreams) => {
        const statements = catalogTexts.length === 1 ? this.catalogStatementsOf(catalogTexts[0] ?? null) : undefined;
        return statements === undefined
          ? (await this.run<{ reply: StepCommitAnswer[] }>(withStreams ? this.groupStreamsStatement : this.groupStatement, [requestsText, `[${catalogTexts.map((text) => text ?? "null").join(",")}]`])).reply
          : (await this.run<{ reply: StepCommitAnswer[] }>(withStreams ? statements.groupStreams : statements.group, [requestsText])).reply;
      },
    }, groupOptions);
  }

  /**
   * The Worker loop's claims commit without waiting for the WAL flush. Only
   * for a store that confirms every single-attempt claim with a synchronous
   * commit before the attempt starts (`Store.confirmClaim`): a claim lost in
   * a server crash is then a claim of a retryable Step, which is claimed and
   * run again as after a Worker crash
   * (docs/decisions/2026-12-07-asynchronous-claims-and-heartbeats.md).
   */
  relaxClaimCommits(): void {
    this.claimsRelaxed = true;
  }

  /**
   * The schema has migration 0020: a Step commit appends the attempt's last
   * Stream messages ({@link StepCommit.streams}), and a heartbeat the ones
   * before it.
   */
  enableCommitStreams(): void {
    if (this.streams !== undefined) this.streamsInCommits = true;
  }

  /** The schema has migration 0021: a publish RPC sends the wake-up for the task it readied. */
  enableRpcWakes(): void {
    if (this.streams !== undefined) this.wakesInRpcs = true;
  }

  /** The schema has migration 0022: a publish RPC claims what it readied for a Worker of this process. */
  enableRpcClaims(): void {
    this.rpcClaims = true;
  }

  /**
   * The schema has migration 0023: every claim (the Worker loop's, a
   * commit's, a publish RPC's) calls `perdure_claim_compact`, whose reply
   * lists each claimed row's values without their column names.
   */
  enableCompactClaims(): void {
    this.compactClaims = true;
    this.claimFunction = "perdure_claim_compact";
    ({ claim: this.claimStatement, relaxedClaim: this.relaxedClaimStatement } = claimStatementsOf(this.quotedSchema, this.claimFunction, "$3::jsonb", 4));
    // Statements made before carry 0019's function.
    this.catalogStatements.clear();
  }

  /** The schema has migration 0014: an RPC whose plan is publishes runs as one request. */
  enablePublishRpc(): void {
    this.publishRpc = (request) => this.publishInOneRequest(request);
  }

  private async publishInOneRequest(request: RpcPublish): Promise<RpcPublishReply> {
    const { room } = request;
    // With migration 0021 the function sends the NOTIFY for a readied task itself, in the RPC's transaction.
    const streams = this.wakesInRpcs ? this.streams : undefined;
    const tasks: WakeEvent = { kind: "tasks", at: request.now };
    const wake = streams?.workerWakePayload(tasks);
    const text = JSON.stringify({
      flowId: request.flowId,
      flowType: request.flowType,
      now: request.now,
      historyKeep: request.historyKeep,
      locks: request.lockNames.map(encodeInstanceKey),
      publishes: request.publishes.map((publish) => [publish.name, encodeInstanceKey(publish.key), publish.value]),
      readyTotals: request.readyTotals,
      room: room === null ? null : {
        channels: room.channels.map((channel) => [channel.name, encodeInstanceKey(channel.key)]),
        maxMessages: room.maxMessages,
        maxBytes: room.maxBytes,
        field: room.field,
      },
      // Migration 0023: the RPC's claim replies compactly (a schema without it reads no such field).
      ...(request.claim !== undefined && this.rpcClaims && this.compactClaims ? { compactClaims: true } : {}),
    });
    if (request.claim !== undefined && this.rpcClaims) return this.publishClaiming(text, request.claim, streams, tasks);
    const { reply } = await this.run<{ reply: RpcPublishReply }>(wake === undefined ? this.publishStatement : this.publishWakingStatement, [text, ...(wake === undefined ? [] : [wake.channel, wake.payload])]);
    if (streams === undefined || reply.outcome !== "published" || !reply.readied) return reply;
    streams.wakeLocally(tasks);
    return { ...reply, woken: true };
  }

  /**
   * Migration 0022's publish RPC: when a wait becomes ready, its transaction
   * claims one task for `claim`'s Worker, and wakes Workers (here and in
   * other processes) only when the claim left something claimable.
   */
  private async publishClaiming(requestText: string, claim: TaskClaim, streams: OneRequestStreamServices | undefined, tasks: WakeEvent): Promise<RpcPublishReply> {
    const wake = streams?.workerWakePayload(tasks);
    const catalogText = this.catalogText(claim.claim.catalog);
    const statements = this.catalogStatementsOf(catalogText);
    const parameters = [requestText, wake?.channel ?? null, wake?.payload ?? null, claim.workerId, claim.claim.flowTypes];
    const { reply } = statements === undefined
      ? await this.run<{ reply: RpcPublishReply & { claimed?: ClaimedReply } }>(this.publishClaimingStatement, [...parameters, catalogText])
      : await this.run<{ reply: RpcPublishReply & { claimed?: ClaimedReply } }>(statements.publishClaiming, parameters);
    if (reply.outcome !== "published" || !reply.readied) return reply;
    // The reply's `notified` (whether the function sent the NOTIFY) stays inside the store.
    const { claimed, ...published } = reply;
    delete (published as { notified?: boolean }).notified;
    const claims = claimed === undefined ? undefined : this.claimsOf(claimed, claim.claim.catalog);
    // Nothing to wake when the claim took every claimable task. Else the function sent the NOTIFY (when a Worker
    // of another process is alive), and this process's Workers look too; without a wake channel the engine wakes them.
    const tookAll = claims !== undefined && claims.claims.length > 0 && claims.claimedAll === true && !claims.claimStopped;
    if (!tookAll) streams?.wakeLocally(tasks);
    return { ...published, woken: streams !== undefined || tookAll, claimed: claims };
  }

  /**
   * The commit, claim and group statements with `catalogText` written into
   * them as a constant. A Worker sends the same catalog (about 3 KB for an
   * agent session) with every commit and claim. As a parameter the server
   * parsed it into jsonb on every call, about 60 µs of a Step commit's
   * 0.5 ms. As a constant it is parsed when the statement is planned: once
   * per connection with the generic plan the server settles on after a few
   * calls. Undefined (the parameter form) for no catalog, and past
   * `maxCatalogStatements` catalogs, so a process that builds many catalogs
   * does not prepare a statement for each.
   */
  private catalogStatementsOf(catalogText: string | null): CatalogStatements | undefined {
    if (catalogText === null) return undefined;
    let statements = this.catalogStatements.get(catalogText);
    if (statements === undefined) {
      if (this.catalogStatements.size >= maxCatalogStatements) return undefined;
      const catalog = `${pg.escapeLiteral(catalogText)}::jsonb`;
      const schema = this.quotedSchema;
      const named = (text: string): { name: string; text: string } => ({ name: statementName(text), text });
      statements = {
        commit: named(`SELECT ${schema}.perdure_commit_step($1::jsonb, ${catalog}) AS reply`),
        group: named(`SELECT ${schema}.perdure_commit_steps($1::jsonb, jsonb_build_array(${catalog})) AS reply`),
        commitStreams: named(`SELECT ${schema}.perdure_commit_step_streams($1::jsonb, ${catalog}) AS reply`),
        groupStreams: named(`SELECT ${schema}.perdure_commit_steps_streams($1::jsonb, jsonb_build_array(${catalog})) AS reply`),
        ...claimStatementsOf(schema, this.claimFunction, catalog, 3),
        publishClaiming: named(`SELECT ${schema}.perdure_publish_rpc_claiming($1::jsonb, $2, $3, $4, $5::text[], ${catalog}) AS reply`),
      };
      this.catalogStatements.set(catalogText, statements);
    }
    return statements;
  }

  private catalogText(catalog: ClaimCatalog | undefined): string | null {
    if (catalog === undefined) return null;
    let text = this.catalogTexts.get(catalog);
    if (text === undefined) {
      // Lock names hold map instance keys, stored as keys are (text cannot hold U+0000), as every other write of them is.
      const stored = Object.fromEntries(Object.entries(catalog).map(([key, entry]) => [key, entry.length <= 2 ? entry : entry.map((part, index) => (index === 2 ? (part as readonly string[]).map(encodeInstanceKey) : part))]));
      text = JSON.stringify(stored);
      this.catalogTexts.set(catalog, text);
    }
    return text;
  }

  async commitStep(commit: StepCommit): Promise<StepCommitReply> {
    const handover = handoverLeaseTimesOf(commit);
    const appended = this.streamsInCommits ? this.commitStreamsOf(commit) : undefined;
    const compact = this.compactClaims && commit.claim !== undefined ? { compactClaims: true } : {};
    const request = appended === undefined ? { ...commitRequestOf(commit, handover), ...compact } : { ...commitRequestOf(commit, handover), ...compact, streams: appended.request };
    const reply = await this.groups.commit(request, this.catalogText(commit.claim?.catalog)) as unknown as {
      outcome: StepCommitReply["outcome"];
      claimed?: ClaimedReply | null;
      handed?: HandedReply;
      ended?: StepCommitReply["ended"] | null;
      readied?: boolean;
    };
    const ended = reply.ended ?? undefined;
    if (appended !== undefined && reply.outcome === "committed") for (const event of appended.events) this.streams?.wakeLocally(event);
    if (reply.handed !== undefined && handover !== undefined) {
      // The function inserted the one new Step leased to this Worker, exactly as this row says.
      const [movement] = commit.movements as [StepCommit["movements"][number]];
      const { seq, attributes } = reply.handed;
      const execution = leasedExecution({ ...movement, flowId: commit.flowId, seq, executionId: String(seq) }, commit.workerId, handover, commit.now);
      return { outcome: reply.outcome, claims: [{ execution, plainAttributes: plainAttributesOf(attributes) }], claimStopped: false, ended };
    }
    return { outcome: reply.outcome, ...this.claimsOf(reply.claimed ?? null, commit.claim?.catalog), ended, readied: reply.readied };
  }

  /** A commit's Stream messages as migration 0020's functions take them, with the wake-ups they send; undefined for none. */
  private commitStreamsOf(commit: StepCommit): { request: Record<string, unknown>; events: WakeEvent[] } | undefined {
    const appends = commit.streams;
    const streams = this.streams;
    if (appends === undefined || appends.length === 0 || streams === undefined) return undefined;
    if (appends.some((append) => append.flowId !== commit.flowId)) throw new Error(`a Step commit carries its own Flow's Stream messages; Flow ${commit.flowId}'s carried others`);
    const { events, wakes } = streamWakesOf(streams, commit.flowId, appends);
    return {
      request: {
        flowId: commit.flowId,
        flowType: appends[0]?.flowType,
        messages: appends.map((append) => [append.stream, append.value, Buffer.byteLength(append.value), append.writtenAt, append.capacityBytes]),
        wakes: wakes.map(({ channel, payload }) => [channel, payload]),
      },
      events,
    };
  }

  async claimTasks(claim: TaskClaim): Promise<TaskClaimReply> {
    const catalogText = this.catalogText(claim.claim.catalog);
    const statements = this.catalogStatementsOf(catalogText);
    const { reply } = statements === undefined
      ? await this.run<{ reply: ClaimedReply }>(
        this.claimsRelaxed ? this.relaxedClaimStatement : this.claimStatement,
        [claim.workerId, claim.claim.flowTypes, catalogText, claim.claim.limit, claim.now],
      )
      : await this.run<{ reply: ClaimedReply }>(
        this.claimsRelaxed ? statements.relaxedClaim : statements.claim,
        [claim.workerId, claim.claim.flowTypes, claim.claim.limit, claim.now],
      );
    return this.claimsOf(reply, claim.claim.catalog);
  }

  private claimsOf(claimed: ClaimedReply | null, catalog: ClaimCatalog | undefined): TaskClaimReply {
    if (claimed?.skipped === true) this.onSkippedRows();
    const claims: StoreClaim[] = (claimed?.claims ?? []).map((claim) => {
      const [execution, attributes, loaded] = Array.isArray(claim)
        ? [executionOfValues(claim[0]), claim[1], claim[2] ?? undefined]
        : [executionOf(claim.execution), claim.attributes, claim.loaded];
      const plainAttributes = plainAttributesOf(attributes);
      const loads = loaded === undefined || catalog === undefined ? undefined : claimedLoadsOf(catalog, execution);
      return loads === undefined ? { execution, plainAttributes } : { execution, plainAttributes, selection: { loads, loaded: decodeLoaded(loads, loaded ?? []) } };
    });
    // `more` since migration 0019: false when the claim took every claimable task it saw.
    return { claims, claimStopped: claimed?.stopped === true, claimedAll: typeof claimed?.more === "boolean" ? !claimed.more : undefined };
  }

  private async appendOne(streams: OneRequestStreamServices, append: StreamAppend): Promise<number> {
    const { flowId, flowType, stream, value, writtenAt, capacityBytes } = append;
    const event: WakeEvent = { kind: "stream", flowId, stream };
    const { channel, payload } = streams.wakePayload(event);
    const row = await this.run<{ index: number }>(
      this.appendStatement,
      [flowId, stream, flowType, value, Buffer.byteLength(value), writtenAt, capacityBytes, channel, payload],
    );
    streams.wakeLocally(event);
    return row.index;
  }

  private async appendBatch(streams: OneRequestStreamServices, batch: readonly StreamAppend[]): Promise<number[]> {
    const [first] = batch;
    if (first === undefined) return [];
    const { parameters, events } = streamParametersOf(streams, first.flowId, batch);
    const row = await this.run<{ indexes: string[] | number[] }>(this.appendBatchStatement, [first.flowId, first.flowType, ...parameters]);
    for (const event of events) streams.wakeLocally(event);
    return row.indexes.map(Number);
  }

  async heartbeat(heartbeat: LeaseHeartbeat): Promise<boolean> {
    const { flowId, executionId, workerId, leaseToken, now, heartbeatTimeoutMs, checkpoint } = heartbeat;
    const appends = heartbeat.streams ?? [];
    const streams = this.streams;
    if (appends.length > 0 && streams !== undefined && this.streamsInCommits) {
      const { parameters, events } = streamParametersOf(streams, flowId, appends);
      const row = await this.run<{ held: boolean }>(this.heartbeatStreamsStatement, [
        flowId, executionId, workerId, leaseToken, now, heartbeatTimeoutMs, checkpoint, appends[0]?.flowType, ...parameters,
      ]);
      for (const event of events) streams.wakeLocally(event);
      return row.held;
    }
    if (appends.length > 0) throw new Error("this PostgreSQL schema's heartbeat cannot carry Stream messages (migration 0020)");
    const { held } = await this.run<{ held: number }>(this.heartbeatStatement, [flowId, executionId, workerId, leaseToken, now, heartbeatTimeoutMs, checkpoint]);
    return held > 0;
  }

  async readSelection(flowId: string, loads: readonly SelectedLoad[]): Promise<SelectionRead> {
    const request = loads.map((load) => load.kind === "range"
      ? { kind: "range", name: load.name, fromKey: encodeInstanceKey(load.fromKey ?? ""), toKey: load.toKey === undefined ? null : encodeInstanceKey(load.toKey), limit: load.limit ?? null }
      : { kind: load.kind, name: load.name, key: encodeInstanceKey(load.key) });
    const row = await this.run<{ plain: [string, string][]; loaded: unknown[] }>(this.selectionStatement, [flowId, JSON.stringify(request)]);
    return { plain: row.plain.map(([name, value]) => ({ name, key: "", value })), loaded: decodeLoaded(loads, row.loaded) };
  }

  async readAttributes(flowId: string, slots: readonly { name: string; key: string }[]): Promise<(string | undefined)[] | undefined> {
    const keys = slots.map((slot) => encodeInstanceKey(slot.key));
    const row = await this.run<{ found: boolean; found_values: [string, string, string][] }>(this.attributesStatement, [flowId, slots.map((slot) => slot.name), keys]);
    if (!row.found) return undefined;
    const values = new Map(row.found_values.map(([name, key, value]) => [`${name}\u0000${key}`, value]));
    return slots.map((slot, index) => values.get(`${slot.name}\u0000${keys[index] ?? ""}`));
  }

  async readFlow(flowId: string): Promise<FlowRead | undefined> {
    const { flow, executions } = await this.run<{ flow: ColumnRow | null; executions: ColumnRow[] }>(this.readStatement, [flowId]);
    return flow === null ? undefined : { flow: flowOf(flow), executions: executions.map(executionOf) };
  }

  async startFlow(start: FlowStart): Promise<FlowStartReply> {
    const { reply } = await this.run<{ reply: { created: boolean; flowType?: string; status?: FlowRow["status"]; requestId?: string | null } }>(
      this.startStatement,
      [JSON.stringify(columnsOf(start.flow, flowFieldColumns)), start.startExecution === null ? null : JSON.stringify(columnsOf(start.startExecution, executionFieldColumns))],
    );
    if (reply.created) return { created: true };
    return { created: false, existing: { flowType: reply.flowType ?? "", status: reply.status ?? "running", requestId: reply.requestId ?? null } };
  }
}
