import type { StreamAppend } from "../../store/step-commit.ts";
import type { PoolClient, QueryResultRow } from "pg";
import type {
  AttributeRow,
  ExecutionRow,
  ExecutionStatus,
  FlowRow,
  HistoryRow,
  ListFlowsFilter,
  MessageRow,
  StoreTransaction,
  StreamRow,
  TimerRow,
} from "../../store/store.ts";
import { decodeInstanceKey, encodeInstanceKey } from "./instance-key.ts";
import {
  executionColumns,
  executionFieldColumns,
  executionFields,
  flowColumns,
  flowColumnsOf,
  flowFieldColumns,
  statementName,
  timerColumns,
  type FlowFields,
} from "./postgres-columns.ts";
import { appendStream, readStream, recentStream, streamBatchColumns } from "./postgres-streams.ts";

/**
 * Thrown inside a transaction when it lost a race that a fresh attempt
 * resolves (two starts inserting the same flow ID); the store retries.
 */
export class TransactionConflict extends Error {
  override readonly name = "TransactionConflict";
}

/**
 * What a store knows of the Workers beside its own: which Workers touch
 * their liveness through it (the Workers of this process), and whether the
 * last liveness write found a Worker of another process alive. A store
 * whose Workers are the only ones alive sends no NOTIFY for events only
 * Workers act on (see `PostgresStore.wake`).
 */
export interface WorkerPresence {
  now(): number;
  /** Notes `workerId` as this store's; returns every Worker ID the store has. */
  touched(workerId: string): string[];
  removed(workerId: string): void;
  saw(othersAlive: boolean, at: number): void;
}

/**
 * The PostgreSQL implementation of {@link StoreTransaction}, on one pooled
 * connection inside BEGIN/COMMIT at READ COMMITTED.
 *
 * Serialization per Flow: the first operation on a Flow's rows in a
 * transaction takes that Flow row's lock (`SELECT ... FOR UPDATE`) unless the
 * transaction already holds it, and keeps it until commit. Every change to a
 * Flow's rows therefore happens under its lock, so whatever a transaction
 * reads of a Flow it has locked stays true until it commits — the guarantee
 * the SQLite store gets from running one transaction at a time. Scans across
 * Flows (claimable tasks, lapsed leases, due timers) lock the Flow rows of
 * the rows they return with `FOR UPDATE ... SKIP LOCKED`, so Workers never
 * wait for each other and never see a row another commit is changing.
 */
export class PostgresTransaction implements StoreTransaction {
  private readonly client: PoolClient;
  /** The quoted schema name, prefixed to every table. */
  private readonly schema: string;
  /** Flows whose row this transaction holds the lock of. */
  private readonly lockedFlows = new Set<string>();
  /** The Flow rows as they stand in this transaction (undefined: no such Flow), for the locked Flows read so far. */
  private readonly flowRows = new Map<string, FlowRow | undefined>();
  /** Set when a scan found rows it skipped because another transaction held their Flow. */
  skippedLockedRows = false;
  private readonly pendingWrites: Promise<void>[] = [];
  private writeError: Error | undefined;
  /** Whether a statement other than a SELECT ran (row locks change nothing that a crash could lose). */
  private changedRows = false;

  /** A read-only transaction on one snapshot (`Store.read`): it reads Flow rows without locking them. */
  private readonly reading: boolean;

  /** Present when the schema has migration 0021's `perdure_write_streams`. */
  readonly appendStreams: ((batch: readonly StreamAppend[]) => Promise<number[]>) | undefined;

  /** Told which Workers touch their liveness through this store, and whether others are alive (see `WorkerPresence`). */
  private readonly presence: WorkerPresence | undefined;

  constructor(client: PoolClient, quotedSchema: string, options: { reading?: boolean; writesStreamBatches?: boolean; presence?: WorkerPresence } = {}) {
    this.client = client;
    this.schema = quotedSchema;
    this.presence = options.presence;
    this.reading = options.reading === true;
    this.appendStreams = options.writesStreamBatches === true ? (batch) => this.writeStreamBatch(batch) : undefined;
  }

  /** One statement: the batch's heads, then the byte counts (migration 0021); the commit's durability is left as it is. */
  private async writeStreamBatch(batch: readonly StreamAppend[]): Promise<number[]> {
    const [first] = batch;
    if (first === undefined) return [];
    const columns = streamBatchColumns(first.flowId, batch);
    // A SELECT that writes: the commit must wait for its flush as any other write's.
    this.changedRows = true;
    const [row] = await this.rows<{ indexes: string[] }>(
      `SELECT ${this.schema}.perdure_write_streams($1, $2, $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[]) AS indexes`,
      [first.flowId, first.flowType, ...columns],
    );
    return (row?.indexes ?? []).map(Number);
  }

  /**
   * True while the transaction has run only SELECTs: it read, and perhaps
   * locked Flow rows, but changed nothing, so its COMMIT has nothing to make
   * durable.
   */
  get changedNothing(): boolean {
    return !this.changedRows;
  }

  private noteStatement(text: string): void {
    if (!this.changedRows && !/^\s*SELECT\b/i.test(text)) this.changedRows = true;
  }

  private async rows<TRow extends QueryResultRow>(text: string, values: unknown[]): Promise<TRow[]> {
    this.noteStatement(text);
    try {
      return (await this.client.query<TRow>({ name: statementName(text), text, values })).rows;
    } catch (error) {
      // After a pipelined write failed, PostgreSQL refuses everything else: report the cause.
      throw this.writeError ?? error;
    }
  }

  private async count(text: string, values: unknown[]): Promise<number> {
    this.noteStatement(text);
    try {
      return (await this.client.query({ name: statementName(text), text, values })).rowCount ?? 0;
    } catch (error) {
      throw this.writeError ?? error;
    }
  }

  /**
   * Sends a write without waiting for its answer: the connection runs
   * statements in order, so later statements see it, and {@link settle}
   * (called before COMMIT) surfaces its failure. This saves a round trip per
   * write on a pipelined connection.
   */
  private write(text: string, values: unknown[]): void {
    this.noteStatement(text);
    const sent = this.client.query({ name: statementName(text), text, values }).then(
      () => undefined,
      (error: unknown) => {
        this.writeError ??= error instanceof Error ? error : new Error(String(error));
      },
    );
    this.pendingWrites.push(sent);
  }

  /** Waits for every pipelined write; throws the first one's failure. */
  async settle(): Promise<void> {
    await Promise.all(this.pendingWrites);
    this.pendingWrites.length = 0;
    if (this.writeError !== undefined) throw this.writeError;
  }

  private async readLockedFlow(flowId: string): Promise<FlowRow | undefined> {
    const lock = this.reading ? "" : " FOR UPDATE";
    const [row] = await this.rows<FlowRow>(`SELECT ${flowColumns} FROM ${this.schema}.flows WHERE flow_id = $1${lock}`, [flowId]);
    this.lockedFlows.add(flowId);
    this.flowRows.set(flowId, row);
    return row;
  }

  /** Takes the Flow row's lock once per transaction; every per-Flow operation calls this first. */
  private async lock(flowId: string): Promise<void> {
    if (!this.lockedFlows.has(flowId)) await this.readLockedFlow(flowId);
  }

  async lockFlow(flowId: string): Promise<FlowRow | undefined> {
    const row = this.flowRows.has(flowId) ? this.flowRows.get(flowId) : await this.readLockedFlow(flowId);
    return row === undefined ? undefined : { ...row };
  }

  async insertFlow(row: FlowRow): Promise<void> {
    const inserted = await this.count(
      `INSERT INTO ${this.schema}.flows (flow_id, flow_type, status, input, output, error, request_id, created_at, updated_at, next_seq)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (flow_id) DO NOTHING`,
      [row.flowId, row.flowType, row.status, row.input, row.output, row.error, row.requestId, row.createdAt, row.updatedAt, row.nextSeq],
    );
    // Another transaction created the Flow after this one found none: a fresh attempt sees it.
    if (inserted === 0) throw new TransactionConflict(`Flow ${row.flowId} was created concurrently`);
    this.lockedFlows.add(row.flowId);
    this.flowRows.set(row.flowId, { ...row });
  }

  async updateFlow(flowId: string, fields: FlowFields): Promise<void> {
    const entries = Object.entries(fields) as [keyof FlowFields, unknown][];
    if (entries.length === 0) return;
    await this.lock(flowId);
    const assignments = entries.map(([field], index) => `${flowFieldColumns[field]} = $${index + 2}`).join(", ");
    this.write(`UPDATE ${this.schema}.flows SET ${assignments} WHERE flow_id = $1`, [flowId, ...entries.map(([, value]) => value)]);
    const cached = this.flowRows.get(flowId);
    if (cached !== undefined) Object.assign(cached, fields);
  }

  async listFlows(filter: ListFlowsFilter): Promise<FlowRow[]> {
    const conditions: string[] = [];
    const values: unknown[] = [];
    const add = (condition: string, value: unknown): void => {
      values.push(value);
      conditions.push(`${condition} $${values.length}`);
    };
    if (filter.flowType !== undefined) add("flow_type =", filter.flowType);
    if (filter.status !== undefined) add("status =", filter.status);
    if (filter.afterFlowId !== undefined) add("flow_id >", filter.afterFlowId);
    const where = conditions.length === 0 ? "" : `WHERE ${conditions.join(" AND ")}`;
    values.push(filter.limit);
    return this.rows<FlowRow>(`SELECT ${flowColumns} FROM ${this.schema}.flows ${where} ORDER BY flow_id LIMIT $${values.length}`, values);
  }

  private attributeRows(rows: AttributeRow[]): AttributeRow[] {
    for (const row of rows) row.key = decodeInstanceKey(row.key);
    return rows;
  }

  async readPlainAttributes(flowId: string): Promise<AttributeRow[]> {
    await this.lock(flowId);
    return this.rows<AttributeRow>(`SELECT name, key, value FROM ${this.schema}.attributes WHERE flow_id = $1 AND key = ''`, [flowId]);
  }

  async readAttribute(flowId: string, name: string, key: string): Promise<string | undefined> {
    await this.lock(flowId);
    const [row] = await this.rows<{ value: string }>(
      `SELECT value FROM ${this.schema}.attributes WHERE flow_id = $1 AND name = $2 AND key = $3`,
      [flowId, name, encodeInstanceKey(key)],
    );
    return row?.value;
  }

  async readAttributeRange(flowId: string, name: string, range: { fromKey?: string; toKey?: string; limit?: number }): Promise<AttributeRow[]> {
    await this.lock(flowId);
    return this.attributeRows(await this.rows<AttributeRow>(
      `SELECT name, key, value FROM ${this.schema}.attributes
       WHERE flow_id = $1 AND name = $2 AND key > '' AND key >= $3 AND ($4::text IS NULL OR key < $4)
       ORDER BY key LIMIT $5`,
      [flowId, name, encodeInstanceKey(range.fromKey ?? ""), range.toKey === undefined ? null : encodeInstanceKey(range.toKey), range.limit ?? null],
    ));
  }

  async writeAttribute(flowId: string, name: string, key: string, value: string | null): Promise<void> {
    await this.lock(flowId);
    if (value === null) {
      this.write(`DELETE FROM ${this.schema}.attributes WHERE flow_id = $1 AND name = $2 AND key = $3`, [flowId, name, encodeInstanceKey(key)]);
    } else {
      this.write(
        `INSERT INTO ${this.schema}.attributes (flow_id, name, key, value) VALUES ($1, $2, $3, $4)
         ON CONFLICT (flow_id, name, key) DO UPDATE SET value = excluded.value`,
        [flowId, name, encodeInstanceKey(key), value],
      );
    }
  }

  async insertMessage(flowId: string, row: MessageRow): Promise<void> {
    await this.lock(flowId);
    this.write(
      `INSERT INTO ${this.schema}.messages (flow_id, seq, channel, key, message_id, value, published_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [flowId, row.seq, row.channel, encodeInstanceKey(row.key), row.messageId, row.value, row.publishedAt],
    );
  }

  async listMessages(flowId: string, channel: string, key: string, limit?: number): Promise<MessageRow[]> {
    await this.lock(flowId);
    const rows = await this.rows<MessageRow>(
      `SELECT seq, channel, key, message_id AS "messageId", value, published_at AS "publishedAt" FROM ${this.schema}.messages
       WHERE flow_id = $1 AND channel = $2 AND key = $3 ORDER BY seq LIMIT $4`,
      [flowId, channel, encodeInstanceKey(key), limit ?? null],
    );
    for (const row of rows) row.key = key;
    return rows;
  }

  async deleteMessage(flowId: string, messageId: string): Promise<boolean> {
    await this.lock(flowId);
    return await this.count(`DELETE FROM ${this.schema}.messages WHERE flow_id = $1 AND message_id = $2`, [flowId, messageId]) > 0;
  }

  async insertExecution(row: ExecutionRow): Promise<void> {
    await this.lock(row.flowId);
    this.write(
      `INSERT INTO ${this.schema}.executions (${executionFields.map((field) => executionFieldColumns[field]).join(", ")})
       VALUES (${executionFields.map((_field, index) => `$${index + 1}`).join(", ")})`,
      executionFields.map((field) => row[field]),
    );
  }

  async getExecution(flowId: string, executionId: string): Promise<ExecutionRow | undefined> {
    // A transaction that already holds other Flows' locks must not wait for this one, or two of
    // them could deadlock (the Worker's cancellation check reads many Flows): it reads what is
    // committed without locking. Engine code that changes a Flow locks it first.
    if (this.lockedFlows.has(flowId) || this.lockedFlows.size > 0) {
      const [row] = await this.rows<ExecutionRow>(
        `SELECT ${executionColumns("e")} FROM ${this.schema}.executions e WHERE e.flow_id = $1 AND e.execution_id = $2`,
        [flowId, executionId],
      );
      return row;
    }
    // The first read of a transaction (a commit checking its lease) locks the Flow and the
    // execution in one statement; locking both makes PostgreSQL re-read them after any wait,
    // so the row is what the previous lock holder committed.
    const [joined] = await this.rows<ExecutionRow & Record<string, unknown>>(
      `SELECT ${flowColumnsOf("f", "flow.")}, ${executionColumns("e")}
       FROM ${this.schema}.flows f JOIN ${this.schema}.executions e ON e.flow_id = f.flow_id
       WHERE f.flow_id = $1 AND e.execution_id = $2 FOR UPDATE OF f, e`,
      [flowId, executionId],
    );
    if (joined === undefined) {
      await this.lock(flowId);
      return undefined;
    }
    const flow: Record<string, unknown> = {};
    for (const [column, value] of Object.entries(joined)) {
      if (!column.startsWith("flow.")) continue;
      flow[column.slice(5)] = value;
      Reflect.deleteProperty(joined, column);
    }
    this.lockedFlows.add(flowId);
    this.flowRows.set(flowId, flow as unknown as FlowRow);
    return joined;
  }

  async updateExecution(flowId: string, executionId: string, fields: Partial<ExecutionRow>): Promise<void> {
    const entries = Object.entries(fields) as [keyof ExecutionRow, unknown][];
    if (entries.length === 0) return;
    await this.lock(flowId);
    const assignments = entries.map(([field], index) => `${executionFieldColumns[field]} = $${index + 3}`).join(", ");
    this.write(
      `UPDATE ${this.schema}.executions SET ${assignments} WHERE flow_id = $1 AND execution_id = $2`,
      [flowId, executionId, ...entries.map(([, value]) => value)],
    );
  }

  async deleteExecution(flowId: string, executionId: string): Promise<void> {
    await this.lock(flowId);
    this.write(`DELETE FROM ${this.schema}.executions WHERE flow_id = $1 AND execution_id = $2`, [flowId, executionId]);
  }

  async listExecutions(flowId: string, status?: ExecutionStatus): Promise<ExecutionRow[]> {
    await this.lock(flowId);
    if (status !== undefined) {
      return this.rows<ExecutionRow>(
        `SELECT ${executionColumns("e")} FROM ${this.schema}.executions e WHERE e.flow_id = $1 AND e.status = $2 ORDER BY e.seq`,
        [flowId, status],
      );
    }
    return this.rows<ExecutionRow>(`SELECT ${executionColumns("e")} FROM ${this.schema}.executions e WHERE e.flow_id = $1 ORDER BY e.seq`, [flowId]);
  }

  async countClaimable(flowTypes: readonly string[], now: number, limit: number): Promise<number> {
    if (flowTypes.length === 0) return 0;
    const rows = await this.rows<{ ready: number }>(
      `SELECT count(*)::int AS ready FROM (SELECT 1 FROM ${this.schema}.executions e
       WHERE e.claimed_by IS NULL AND e.status IN ('asking', 'ready') AND e.available_at <= $1 AND e.flow_type = ANY($2::text[])
         AND (e.expires_at IS NULL OR e.expires_at > $1) LIMIT $3) candidates`,
      [now, flowTypes, limit],
    );
    return Number(rows[0]?.ready ?? 0);
  }

  async findClaimable(flowTypes: readonly string[], now: number, limit: number): Promise<ExecutionRow[]> {
    if (flowTypes.length === 0) return [];
    const where = `e.claimed_by IS NULL AND e.status IN ('asking', 'ready') AND e.available_at <= $1 AND e.flow_type = ANY($2::text[])
         AND (e.expires_at IS NULL OR e.expires_at > $1)`;
    // `visible` counts the candidates whether locked or not: when it exceeds what could be locked,
    // the store looks again soon instead of leaving a briefly busy Flow's task for the next poll.
    const rows = await this.rows<ExecutionRow & { visible: number }>(
      `WITH locked AS (
         SELECT ${executionColumns("e")} FROM ${this.schema}.executions e JOIN ${this.schema}.flows f ON f.flow_id = e.flow_id
         WHERE ${where} ORDER BY e.available_at, e.flow_id, e.seq LIMIT $3 FOR UPDATE OF e, f SKIP LOCKED
       ), visible AS (
         SELECT count(*) AS visible FROM (SELECT 1 FROM ${this.schema}.executions e WHERE ${where} LIMIT $3) candidates
       )
       SELECT locked.*, visible.visible FROM visible LEFT JOIN locked ON true ORDER BY locked."availableAt", locked."flowId", locked.seq`,
      [now, flowTypes, limit],
    );
    const claimable: ExecutionRow[] = [];
    const visible = rows[0]?.visible ?? 0;
    for (const row of rows) {
      if (row.flowId === null) continue;
      Reflect.deleteProperty(row, "visible");
      this.lockedFlows.add(row.flowId);
      claimable.push(row);
    }
    if (visible > claimable.length) this.skippedLockedRows = true;
    return claimable;
  }

  async findLapsedLeases(flowTypes: readonly string[], now: number, limit: number): Promise<ExecutionRow[]> {
    if (flowTypes.length === 0) return [];
    const rows = await this.rows<ExecutionRow>(
      `SELECT ${executionColumns("e")} FROM ${this.schema}.executions e JOIN ${this.schema}.flows f ON f.flow_id = e.flow_id
       WHERE e.claimed_by IS NOT NULL AND e.flow_type = ANY($1::text[]) AND (e.lease_expires_at <= $2
         OR NOT EXISTS (SELECT 1 FROM ${this.schema}.workers w WHERE w.worker_id = e.claimed_by AND w.expires_at > $2))
       ORDER BY e.claimed_by LIMIT $3 FOR UPDATE OF e, f SKIP LOCKED`,
      [flowTypes, now, limit],
    );
    for (const row of rows) this.lockedFlows.add(row.flowId);
    return rows;
  }

  async findClaimedBy(workerId: string, limit: number): Promise<ExecutionRow[]> {
    return this.rows<ExecutionRow>(`SELECT ${executionColumns("e")} FROM ${this.schema}.executions e WHERE e.claimed_by = $1 LIMIT $2`, [workerId, limit]);
  }

  async findExpiredQueued(flowTypes: readonly string[], now: number, limit: number): Promise<ExecutionRow[]> {
    if (flowTypes.length === 0) return [];
    const rows = await this.rows<ExecutionRow>(
      `SELECT ${executionColumns("e")} FROM ${this.schema}.executions e JOIN ${this.schema}.flows f ON f.flow_id = e.flow_id
       WHERE e.claimed_by IS NULL AND e.expires_at IS NOT NULL AND e.status IN ('asking', 'ready') AND e.expires_at <= $1
         AND e.flow_type = ANY($2::text[]) LIMIT $3 FOR UPDATE OF e, f SKIP LOCKED`,
      [now, flowTypes, limit],
    );
    for (const row of rows) this.lockedFlows.add(row.flowId);
    return rows;
  }

  async heldLocks(flowId: string, names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    await this.lock(flowId);
    // Lock names hold map instance keys, stored as keys are (text cannot hold U+0000).
    const rows = await this.rows<{ name: string }>(`SELECT name FROM ${this.schema}.locks WHERE flow_id = $1 AND name = ANY($2::text[])`, [flowId, names.map(encodeInstanceKey)]);
    return rows.map((row) => decodeInstanceKey(row.name));
  }

  async acquireLocks(flowId: string, names: readonly string[], executionId: string): Promise<void> {
    if (names.length === 0) return;
    await this.lock(flowId);
    this.write(`INSERT INTO ${this.schema}.locks (flow_id, name, execution_id) SELECT $1, unnest($2::text[]), $3`, [flowId, names.map(encodeInstanceKey), executionId]);
  }

  async releaseLocks(flowId: string, executionId: string): Promise<void> {
    await this.lock(flowId);
    this.write(`DELETE FROM ${this.schema}.locks WHERE flow_id = $1 AND execution_id = $2`, [flowId, executionId]);
  }

  async insertTimer(row: TimerRow): Promise<void> {
    await this.lock(row.flowId);
    this.write(
      `INSERT INTO ${this.schema}.timers (flow_id, flow_type, execution_id, timer_id, due_at, fired) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (flow_id, execution_id, timer_id) DO UPDATE SET flow_type = excluded.flow_type, due_at = excluded.due_at, fired = excluded.fired`,
      [row.flowId, row.flowType, row.executionId, row.timerId, row.dueAt, row.fired],
    );
  }

  async listTimers(flowId: string, executionId: string): Promise<TimerRow[]> {
    await this.lock(flowId);
    return this.rows<TimerRow>(`SELECT ${timerColumns("t")} FROM ${this.schema}.timers t WHERE t.flow_id = $1 AND t.execution_id = $2`, [flowId, executionId]);
  }

  async findTimersById(flowId: string, timerId: string): Promise<TimerRow[]> {
    await this.lock(flowId);
    return this.rows<TimerRow>(`SELECT ${timerColumns("t")} FROM ${this.schema}.timers t WHERE t.flow_id = $1 AND t.timer_id = $2`, [flowId, timerId]);
  }

  async deleteTimers(flowId: string, executionId: string): Promise<void> {
    await this.lock(flowId);
    this.write(`DELETE FROM ${this.schema}.timers WHERE flow_id = $1 AND execution_id = $2`, [flowId, executionId]);
  }

  async findDueTimers(flowTypes: readonly string[], now: number, limit: number): Promise<TimerRow[]> {
    if (flowTypes.length === 0) return [];
    const rows = await this.rows<TimerRow>(
      `SELECT ${timerColumns("t")} FROM ${this.schema}.timers t JOIN ${this.schema}.flows f ON f.flow_id = t.flow_id
       WHERE NOT t.fired AND t.due_at <= $1 AND t.flow_type = ANY($2::text[]) ORDER BY t.due_at LIMIT $3
       FOR UPDATE OF t, f SKIP LOCKED`,
      [now, flowTypes, limit],
    );
    for (const row of rows) this.lockedFlows.add(row.flowId);
    return rows;
  }

  async markTimerFired(flowId: string, executionId: string, timerId: string, now: number): Promise<void> {
    await this.lock(flowId);
    this.write(
      `UPDATE ${this.schema}.timers SET fired = true, due_at = LEAST(due_at, $1) WHERE flow_id = $2 AND execution_id = $3 AND timer_id = $4`,
      [now, flowId, executionId, timerId],
    );
  }

  async nextTimerDueAt(flowTypes: readonly string[]): Promise<number | undefined> {
    if (flowTypes.length === 0) return undefined;
    const [row] = await this.rows<{ at: number | null }>(
      // The earliest pending Timer of each Flow type, each found by walking the due-time index to its first
      // match. MIN() over \`flow_type = ANY(…)\` read every pending Timer, so an idle Worker read as many rows
      // per poll as Flows waited with a Timer.
      `SELECT MIN(first.due_at) AS at FROM unnest($1::text[]) AS hosted(flow_type)
       CROSS JOIN LATERAL (SELECT t.due_at FROM ${this.schema}.timers t WHERE NOT t.fired AND t.flow_type = hosted.flow_type
         ORDER BY t.due_at LIMIT 1) AS first`,
      [flowTypes],
    );
    return row?.at ?? undefined;
  }

  async appendHistory(row: HistoryRow): Promise<void> {
    await this.lock(row.flowId);
    this.write(
      `INSERT INTO ${this.schema}.history (flow_id, seq, execution_id, step_type, method, status, attempt, started_at, finished_at, outcome, error)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [row.flowId, row.seq, row.executionId, row.stepType, row.method, row.status, row.attempt, row.startedAt, row.finishedAt, row.outcome, row.error],
    );
  }

  async trimHistory(flowId: string, keep: number): Promise<void> {
    await this.lock(flowId);
    this.write(
      `DELETE FROM ${this.schema}.history WHERE flow_id = $1
         AND seq <= (SELECT seq FROM ${this.schema}.history WHERE flow_id = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2)`,
      [flowId, keep],
    );
  }

  async listHistory(flowId: string, limit: number): Promise<HistoryRow[]> {
    await this.lock(flowId);
    return this.rows<HistoryRow>(
      `SELECT * FROM (SELECT flow_id AS "flowId", seq, execution_id AS "executionId", step_type AS "stepType", method, status, attempt,
         started_at AS "startedAt", finished_at AS "finishedAt", outcome, error FROM ${this.schema}.history WHERE flow_id = $1
         ORDER BY seq DESC LIMIT $2) recent
       ORDER BY seq`,
      [flowId, limit],
    );
  }

  // Streams are written outside Flow commits (never rolled back), so they take no Flow lock.
  async appendStream(flowId: string, flowType: string, stream: string, value: string, writtenAt: number, capacityBytes: number): Promise<number> {
    return appendStream(this.client, this.schema, { flowId, flowType, stream, value, writtenAt, capacityBytes });
  }

  async readStream(flowId: string, stream: string, afterIndex: number, limit: number): Promise<{ rows: StreamRow[]; firstIndex: number | undefined; lastIndex: number }> {
    return readStream(this.client, this.schema, flowId, stream, afterIndex, limit);
  }

  async recentStream(flowId: string, stream: string, limit: number): Promise<StreamRow[]> {
    return recentStream(this.client, this.schema, flowId, stream, limit);
  }

  async touchWorker(workerId: string, expiresAt: number): Promise<void> {
    this.write(
      `INSERT INTO ${this.schema}.workers (worker_id, expires_at) VALUES ($1, $2) ON CONFLICT (worker_id) DO UPDATE SET expires_at = excluded.expires_at`,
      [workerId, expiresAt],
    );
    const presence = this.presence;
    if (presence === undefined) return;
    // With each liveness write, whether a Worker of another process is alive: it alone needs Workers' wake-ups.
    const locals = presence.touched(workerId);
    const now = presence.now();
    const [row] = await this.rows<{ others: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${this.schema}.workers WHERE expires_at > $1 AND NOT (worker_id = ANY($2::text[]))) AS others`,
      [now, locals],
    );
    presence.saw(row?.others !== false, now);
  }

  async removeWorker(workerId: string): Promise<void> {
    this.write(`DELETE FROM ${this.schema}.workers WHERE worker_id = $1`, [workerId]);
    this.presence?.removed(workerId);
  }
}
