import type { SQLInputValue } from "node:sqlite";
import type {
  AttributeRow,
  ExecutionLease,
  ExecutionRow,
  ExecutionStatus,
  FlowRow,
  HistoryRow,
  ListFlowsFilter,
  MessageRow,
  StoreTransaction,
  StreamRow,
  TimerRow,
} from "../store/store.ts";
import type { StreamAppend } from "../store/step-commit.ts";
import { appendStreamRow, appendStreamRows } from "./sqlite-stream-append.ts";
import { executionFieldColumns, executionFields, flowFieldColumns } from "../store/row-columns.ts";
import {
  deleteAttributeSql, deleteExecutionSql, executionColumns, executionInsertSql, findClaimableSql, flowColumns, limitParameter, listExecutionsSql,
  placeholders, readFlowSql, releaseLocksSql, textParameter, trimHistorySql, upsertAttributeSql,
} from "./sqlite-statements.ts";
import type { TransactionStatements } from "./transaction-run.ts";

/**
 * The SQLite implementation of {@link StoreTransaction}. Every call runs its
 * statements synchronously inside `BEGIN IMMEDIATE`; a call made after the
 * work waited on something other than the store first takes the write lock
 * back (`attach`), which the transaction gives up while the event loop turns.
 */
export class SqliteTransaction implements StoreTransaction {
  private readonly statements: TransactionStatements;

  constructor(statements: TransactionStatements) {
    this.statements = statements;
  }

  /** Whether a call must take the write lock back before its statements run. */
  private get detached(): boolean {
    return !this.statements.attached;
  }

  private attach(): Promise<void> {
    return this.statements.attach();
  }

  private all<TRow>(sql: string, ...parameters: SQLInputValue[]): TRow[] {
    return this.statements.all(sql, parameters) as TRow[];
  }

  private get<TRow>(sql: string, ...parameters: SQLInputValue[]): TRow | undefined {
    return this.statements.get(sql, parameters) as TRow | undefined;
  }

  private run(sql: string, ...parameters: SQLInputValue[]): number {
    return this.statements.run(sql, parameters);
  }

  async lockFlow(flowId: string): Promise<FlowRow | undefined> {
    if (this.detached) await this.attach();
    return this.get<FlowRow>(readFlowSql, flowId);
  }

  async insertFlow(row: FlowRow): Promise<void> {
    if (this.detached) await this.attach();
    this.run(
      `INSERT INTO flows (flow_id, flow_type, status, input, output, error, request_id, created_at, updated_at, next_seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      row.flowId, row.flowType, row.status, row.input, row.output, row.error, row.requestId, row.createdAt, row.updatedAt, row.nextSeq,
    );
  }

  async updateFlow(flowId: string, fields: Partial<Pick<FlowRow, "status" | "output" | "error" | "updatedAt" | "nextSeq">>): Promise<void> {
    if (this.detached) await this.attach();
    const entries = Object.entries(fields) as [keyof FlowRow, SQLInputValue][];
    if (entries.length === 0) return;
    const assignments = entries.map(([field]) => `${flowFieldColumns[field]} = ?`).join(", ");
    this.run(`UPDATE flows SET ${assignments} WHERE flow_id = ?`, ...entries.map(([, value]) => value), flowId);
  }

  async listFlows(filter: ListFlowsFilter): Promise<FlowRow[]> {
    if (this.detached) await this.attach();
    const conditions: string[] = [];
    const parameters: SQLInputValue[] = [];
    if (filter.flowType !== undefined) { conditions.push(`flow_type = ${textParameter}`); parameters.push(filter.flowType); }
    if (filter.status !== undefined) { conditions.push(`status = ${textParameter}`); parameters.push(filter.status); }
    if (filter.afterFlowId !== undefined) { conditions.push("flow_id > ?"); parameters.push(filter.afterFlowId); }
    const where = conditions.length === 0 ? "" : `WHERE ${conditions.join(" AND ")}`;
    return this.all<FlowRow>(`SELECT ${flowColumns} FROM flows ${where} ORDER BY flow_id LIMIT ${limitParameter}`, ...parameters, filter.limit);
  }

  async readPlainAttributes(flowId: string): Promise<AttributeRow[]> {
    if (this.detached) await this.attach();
    return this.all<AttributeRow>("SELECT name, key, value FROM attributes INDEXED BY attributes_plain WHERE flow_id = ? AND key = ''", flowId);
  }

  async readAttribute(flowId: string, name: string, key: string): Promise<string | undefined> {
    if (this.detached) await this.attach();
    return this.get<{ value: string }>("SELECT value FROM attributes WHERE flow_id = ? AND name = ? AND key = ?", flowId, name, key)?.value;
  }

  async readAttributeRange(flowId: string, name: string, range: { fromKey?: string; toKey?: string; limit?: number }): Promise<AttributeRow[]> {
    if (this.detached) await this.attach();
    return this.all<AttributeRow>(
      `SELECT name, key, value FROM attributes WHERE flow_id = ${textParameter} AND name = ${textParameter} AND key > '' AND key >= ? AND (? IS NULL OR key < ?)
       ORDER BY key LIMIT ${limitParameter}`,
      flowId, name, range.fromKey ?? "", range.toKey ?? null, range.toKey ?? null, range.limit ?? -1,
    );
  }

  async writeAttribute(flowId: string, name: string, key: string, value: string | null): Promise<void> {
    if (this.detached) await this.attach();
    if (value === null) {
      this.run(deleteAttributeSql, flowId, name, key);
    } else {
      this.run(upsertAttributeSql, flowId, name, key, value);
    }
  }

  async insertMessage(flowId: string, row: MessageRow): Promise<void> {
    if (this.detached) await this.attach();
    this.run(
      "INSERT INTO messages (flow_id, seq, channel, key, message_id, value, published_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      flowId, row.seq, row.channel, row.key, row.messageId, row.value, row.publishedAt,
    );
  }

  async listMessages(flowId: string, channel: string, key: string, limit?: number): Promise<MessageRow[]> {
    if (this.detached) await this.attach();
    return this.all<MessageRow>(
      `SELECT seq, channel, key, message_id AS messageId, value, published_at AS publishedAt FROM messages
       WHERE flow_id = ${textParameter} AND channel = ${textParameter} AND key = ${textParameter} ORDER BY seq LIMIT ${limitParameter}`,
      flowId, channel, key, limit ?? -1,
    );
  }

  async deleteMessage(flowId: string, messageId: string): Promise<boolean> {
    if (this.detached) await this.attach();
    return this.run("DELETE FROM messages WHERE flow_id = ? AND message_id = ?", flowId, messageId) > 0;
  }

  async insertExecution(row: ExecutionRow): Promise<void> {
    if (this.detached) await this.attach();
    this.run(executionInsertSql, ...executionFields.map((field) => row[field]));
  }

  async getExecution(flowId: string, executionId: string): Promise<ExecutionRow | undefined> {
    if (this.detached) await this.attach();
    return this.get<ExecutionRow>(`SELECT ${executionColumns} FROM executions WHERE flow_id = ? AND execution_id = ?`, flowId, executionId);
  }

  async readLease(flowId: string, executionId: string): Promise<ExecutionLease | undefined> {
    if (this.detached) await this.attach();
    return this.get<ExecutionLease>("SELECT claimed_by AS claimedBy, lease_token AS leaseToken FROM executions WHERE flow_id = ? AND execution_id = ?", flowId, executionId);
  }

  async updateExecution(flowId: string, executionId: string, fields: Partial<ExecutionRow>): Promise<void> {
    if (this.detached) await this.attach();
    const entries = Object.entries(fields) as [keyof ExecutionRow, SQLInputValue][];
    if (entries.length === 0) return;
    const assignments = entries.map(([field]) => `${executionFieldColumns[field]} = ?`).join(", ");
    this.run(`UPDATE executions SET ${assignments} WHERE flow_id = ? AND execution_id = ?`, ...entries.map(([, value]) => value), flowId, executionId);
  }

  async deleteExecution(flowId: string, executionId: string): Promise<void> {
    if (this.detached) await this.attach();
    this.run(deleteExecutionSql, flowId, executionId);
  }

  async listExecutions(flowId: string, status?: ExecutionStatus): Promise<ExecutionRow[]> {
    if (this.detached) await this.attach();
    if (status !== undefined) {
      return this.all<ExecutionRow>(`SELECT ${executionColumns} FROM executions WHERE flow_id = ${textParameter} AND status = ${textParameter} ORDER BY seq`, flowId, status);
    }
    return this.all<ExecutionRow>(listExecutionsSql, flowId);
  }

  async findClaimable(flowTypes: readonly string[], now: number, limit: number): Promise<ExecutionRow[]> {
    if (this.detached) await this.attach();
    if (flowTypes.length === 0) return [];
    return this.all<ExecutionRow>(findClaimableSql(flowTypes.length), now, ...flowTypes, now, limit);
  }

  async countClaimable(flowTypes: readonly string[], now: number, limit: number): Promise<number> {
    if (this.detached) await this.attach();
    if (flowTypes.length === 0) return 0;
    const rows = this.all<{ ready: number }>(
      `SELECT count(*) AS ready FROM (SELECT 1 FROM executions
       WHERE claimed_by IS NULL AND status IN ('asking', 'ready') AND available_at <= ? AND flow_type IN (${placeholders(flowTypes.length)})
         AND (expires_at IS NULL OR expires_at > ?) LIMIT ${limitParameter})`,
      now, ...flowTypes, now, limit,
    );
    return Number(rows[0]?.ready ?? 0);
  }

  async findLapsedLeases(flowTypes: readonly string[], now: number, limit: number): Promise<ExecutionRow[]> {
    if (this.detached) await this.attach();
    if (flowTypes.length === 0) return [];
    return this.all<ExecutionRow>(
      `SELECT ${executionColumns} FROM executions e
       WHERE e.claimed_by IS NOT NULL AND e.flow_type IN (${placeholders(flowTypes.length)}) AND (e.lease_expires_at <= ?
         OR NOT EXISTS (SELECT 1 FROM workers w WHERE w.worker_id = e.claimed_by AND w.expires_at > ?))
       LIMIT ${limitParameter}`,
      ...flowTypes, now, now, limit,
    );
  }

  async findClaimedBy(workerId: string, limit: number): Promise<ExecutionRow[]> {
    if (this.detached) await this.attach();
    return this.all<ExecutionRow>(`SELECT ${executionColumns} FROM executions WHERE claimed_by = ? LIMIT ${limitParameter}`, workerId, limit);
  }

  async findExpiredQueued(flowTypes: readonly string[], now: number, limit: number): Promise<ExecutionRow[]> {
    if (this.detached) await this.attach();
    if (flowTypes.length === 0) return [];
    return this.all<ExecutionRow>(
      `SELECT ${executionColumns} FROM executions
       WHERE claimed_by IS NULL AND expires_at IS NOT NULL AND status IN ('asking', 'ready') AND expires_at <= ?
         AND flow_type IN (${placeholders(flowTypes.length)}) LIMIT ${limitParameter}`,
      now, ...flowTypes, limit,
    );
  }

  async heldLocks(flowId: string, names: readonly string[]): Promise<string[]> {
    if (this.detached) await this.attach();
    if (names.length === 0) return [];
    return this.all<{ name: string }>(`SELECT name FROM locks WHERE flow_id = ? AND name IN (${placeholders(names.length)})`, flowId, ...names)
      .map((row) => row.name);
  }

  async acquireLocks(flowId: string, names: readonly string[], executionId: string): Promise<void> {
    if (this.detached) await this.attach();
    for (const name of names) this.run("INSERT INTO locks (flow_id, name, execution_id) VALUES (?, ?, ?)", flowId, name, executionId);
  }

  async releaseLocks(flowId: string, executionId: string): Promise<void> {
    if (this.detached) await this.attach();
    this.run(releaseLocksSql, flowId, executionId);
  }

  async insertTimer(row: TimerRow): Promise<void> {
    if (this.detached) await this.attach();
    this.run(
      "INSERT OR REPLACE INTO timers (flow_id, flow_type, execution_id, timer_id, due_at, fired) VALUES (?, ?, ?, ?, ?, ?)",
      row.flowId, row.flowType, row.executionId, row.timerId, row.dueAt, row.fired ? 1 : 0,
    );
  }

  private timerRows(rows: (Omit<TimerRow, "fired"> & { fired: number })[]): TimerRow[] {
    return rows.map((row) => ({ ...row, fired: row.fired === 1 }));
  }

  async listTimers(flowId: string, executionId: string): Promise<TimerRow[]> {
    if (this.detached) await this.attach();
    return this.timerRows(this.all(
      "SELECT flow_id AS flowId, flow_type AS flowType, execution_id AS executionId, timer_id AS timerId, due_at AS dueAt, fired FROM timers WHERE flow_id = ? AND execution_id = ?",
      flowId, executionId,
    ));
  }

  async findTimersById(flowId: string, timerId: string): Promise<TimerRow[]> {
    if (this.detached) await this.attach();
    return this.timerRows(this.all(
      "SELECT flow_id AS flowId, flow_type AS flowType, execution_id AS executionId, timer_id AS timerId, due_at AS dueAt, fired FROM timers WHERE flow_id = ? AND timer_id = ?",
      flowId, timerId,
    ));
  }

  async deleteTimers(flowId: string, executionId: string): Promise<void> {
    if (this.detached) await this.attach();
    this.run("DELETE FROM timers WHERE flow_id = ? AND execution_id = ?", flowId, executionId);
  }

  async findDueTimers(flowTypes: readonly string[], now: number, limit: number): Promise<TimerRow[]> {
    if (this.detached) await this.attach();
    if (flowTypes.length === 0) return [];
    return this.timerRows(this.all(
      `SELECT flow_id AS flowId, flow_type AS flowType, execution_id AS executionId, timer_id AS timerId, due_at AS dueAt, fired FROM timers
       WHERE fired = 0 AND due_at <= ? AND flow_type IN (${placeholders(flowTypes.length)}) ORDER BY due_at LIMIT ${limitParameter}`,
      now, ...flowTypes, limit,
    ));
  }

  async markTimerFired(flowId: string, executionId: string, timerId: string, now: number): Promise<void> {
    if (this.detached) await this.attach();
    this.run(
      "UPDATE timers SET fired = 1, due_at = MIN(due_at, ?) WHERE flow_id = ? AND execution_id = ? AND timer_id = ?",
      now, flowId, executionId, timerId,
    );
  }

  async nextTimerDueAt(flowTypes: readonly string[]): Promise<number | undefined> {
    if (this.detached) await this.attach();
    if (flowTypes.length === 0) return undefined;
    return this.get<{ at: number | null }>(
      `SELECT MIN(due_at) AS at FROM timers WHERE fired = 0 AND flow_type IN (${placeholders(flowTypes.length)})`,
      ...flowTypes,
    )?.at ?? undefined;
  }

  async appendHistory(row: HistoryRow): Promise<void> {
    if (this.detached) await this.attach();
    this.run(
      `INSERT INTO history (flow_id, seq, execution_id, step_type, method, status, attempt, started_at, finished_at, outcome, error)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      row.flowId, row.seq, row.executionId, row.stepType, row.method, row.status, row.attempt, row.startedAt, row.finishedAt, row.outcome, row.error,
    );
  }

  async trimHistory(flowId: string, keep: number): Promise<void> {
    if (this.detached) await this.attach();
    this.run(trimHistorySql, flowId, flowId, keep);
  }

  async listHistory(flowId: string, limit: number): Promise<HistoryRow[]> {
    if (this.detached) await this.attach();
    return this.all<HistoryRow>(
      `SELECT * FROM (SELECT flow_id AS flowId, seq, execution_id AS executionId, step_type AS stepType, method, status, attempt,
         started_at AS startedAt, finished_at AS finishedAt, outcome, error FROM history WHERE flow_id = ${textParameter} ORDER BY seq DESC LIMIT ${limitParameter})
       ORDER BY seq`,
      flowId, limit,
    );
  }

  async appendStream(flowId: string, flowType: string, stream: string, value: string, writtenAt: number, capacityBytes: number): Promise<number> {
    if (this.detached) await this.attach();
    return appendStreamRow(this.statements, { flowId, flowType, stream, value, writtenAt, capacityBytes });
  }

  /** A batch in one synchronous stretch, by runs of one Stream (see `appendStreamRows`). */
  readonly appendStreams = async (batch: readonly StreamAppend[]): Promise<number[]> => {
    if (this.detached) await this.attach();
    return appendStreamRows(this.statements, batch);
  };

  async readStream(flowId: string, stream: string, afterIndex: number, limit: number): Promise<{ rows: StreamRow[]; firstIndex: number | undefined; lastIndex: number }> {
    if (this.detached) await this.attach();
    const rows = this.all<StreamRow>(
      `SELECT idx AS "index", value, written_at AS writtenAt FROM stream_messages WHERE flow_id = ${textParameter} AND stream = ${textParameter} AND idx > ?
       ORDER BY idx LIMIT ${limitParameter}`,
      flowId, stream, afterIndex, limit,
    );
    const firstIndex = this.get<{ first: number | null }>(
      `SELECT MIN(idx) AS first FROM stream_messages WHERE flow_id = ${textParameter} AND stream = ${textParameter}`, flowId, stream,
    )?.first ?? undefined;
    const lastIndex = this.get<{ lastIndex: number }>("SELECT last_index AS lastIndex FROM stream_heads WHERE flow_id = ? AND stream = ?", flowId, stream)?.lastIndex ?? 0;
    return { rows, firstIndex, lastIndex };
  }

  async recentStream(flowId: string, stream: string, limit: number): Promise<StreamRow[]> {
    if (this.detached) await this.attach();
    return this.all<StreamRow>(
      `SELECT * FROM (SELECT idx AS "index", value, written_at AS writtenAt FROM stream_messages WHERE flow_id = ${textParameter} AND stream = ${textParameter}
       ORDER BY idx DESC LIMIT ${limitParameter}) ORDER BY "index"`,
      flowId, stream, limit,
    );
  }

  async touchWorker(workerId: string, expiresAt: number): Promise<void> {
    if (this.detached) await this.attach();
    this.run(
      "INSERT INTO workers (worker_id, expires_at) VALUES (?, ?) ON CONFLICT (worker_id) DO UPDATE SET expires_at = excluded.expires_at",
      workerId, expiresAt,
    );
  }

  async removeWorker(workerId: string): Promise<void> {
    if (this.detached) await this.attach();
    this.run("DELETE FROM workers WHERE worker_id = ?", workerId);
  }
}
