/**
 * The SQLite store's one-request operations (see `store/step-commit.ts`): a
 * plain Step commit with the next claims, a claim, a flow start and a Flow
 * read, each one synchronous run of prepared statements on the process's
 * connection, as one member of its group commit.
 *
 * A statement costs SQLite no round trip, but the general path pays per
 * store call for what sits around it: a promise, an entry in the statement
 * log kept for a replay that an operation which never waits cannot need,
 * and the reads the engine makes to decide. Here every decision is made
 * before the operation, the fence and the Flow's counters are one read, and
 * a claim reads its candidates with their plain Attributes in one statement.
 * The rows written are exactly the general path's; the equivalence test
 * compares both.
 */
import type { SQLInputValue } from "node:sqlite";
import type {
  FlowRead,
  FlowStart,
  FlowStartReply,
  OneRequestOperations,
  StepCommit,
  StepCommitClaim,
  StepCommitReply,
  StoreClaim,
  TaskClaim,
  TaskClaimReply,
} from "../store/step-commit.ts";
import { claimLeaseTimesOf, handoverLeaseTimesOf, leasedExecution, type LeaseTimes } from "../store/step-commit.ts";
import { executionFields, flowFields } from "../store/row-columns.ts";
import type { AttributeRow, ExecutionRow, FlowRow, WakeEvent } from "../store/store.ts";
import { wakeStreamReaders } from "../stream/stream-batch.ts";
import type { PreparedStatement } from "./prepared-statement.ts";
import { appendStreamRows, type SqliteStatementRunner } from "./sqlite-stream-append.ts";
import {
  deleteAttributeSql, deleteExecutionSql, executionColumns, executionInsertSql, limitParameter, listExecutionsSql, perFlowTypeCount, placeholders,
  readFlowSql, releaseLocksSql, trimHistorySql, upsertAttributeSql,
} from "./sqlite-statements.ts";

/** What the operations need from the connection. */
export interface OneRequestHost {
  /** A cached prepared statement. */
  statement(sql: string): PreparedStatement;
  /** Runs a synchronous operation as one member of the group commit; settles once it landed. */
  runAtomically<TResult>(operation: () => TResult): Promise<TResult>;
  /** Tells this store's listeners. */
  wake(event: WakeEvent): void;
}

/** The fence and the Flow's counters, read together. */
interface FencedRow {
  flowStatus: string;
  nextSeq: number;
  claimedBy: string | null;
  leaseToken: number;
  attempt: number;
  status: string;
  stepType: string;
}

// Scalar subqueries for the Flow's columns: SQLite runs this as two key lookups, where the same read
// written as a join took about four times as long.
const fenceSql = `SELECT (SELECT status FROM flows WHERE flow_id = ?1) AS flowStatus, (SELECT next_seq FROM flows WHERE flow_id = ?1) AS nextSeq,
    claimed_by AS claimedBy, lease_token AS leaseToken, attempt, status, step_type AS stepType
  FROM executions WHERE flow_id = ?1 AND execution_id = ?2`;
const otherExecutionSql = "SELECT 1 AS found FROM executions WHERE flow_id = ? AND execution_id <> ? LIMIT 1";
const makeReadySql = `UPDATE executions SET status = 'ready', claimed_by = NULL, lease_expires_at = NULL, deadline_at = NULL, available_at = ?,
    attempt = 0, scheduled_at = ?, expires_at = ?, conditions = NULL, wait_result = ?
  WHERE flow_id = ? AND execution_id = ?`;
const historySql = `INSERT INTO history (flow_id, seq, execution_id, step_type, method, status, attempt, started_at, finished_at, outcome, error)
  VALUES (?, ?, ?, ?, ?, 'completed', ?, ?, ?, ?, NULL)`;
const finishFlowSql = `UPDATE flows SET status = ?, output = ?, error = ?, next_seq = ?, updated_at = CASE WHEN ? THEN ? ELSE updated_at END
  WHERE flow_id = ? RETURNING input, created_at AS createdAt, updated_at AS updatedAt`;
const bumpFlowSql = "UPDATE flows SET next_seq = ?, updated_at = ? WHERE flow_id = ?";
const leaseSql = `UPDATE executions SET claimed_by = ?, lease_token = ?, attempt = ?, execute_claims = ?, deadline_at = ?, lease_expires_at = ?
  WHERE flow_id = ? AND execution_id = ?`;
const insertFlowSql = `INSERT INTO flows (flow_id, flow_type, status, input, output, error, request_id, created_at, updated_at, next_seq)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (flow_id) DO NOTHING`;
const existingFlowSql = "SELECT flow_type AS flowType, status, request_id AS requestId FROM flows WHERE flow_id = ?";

/** The first place in the claim order of a queued, available task of `count` Flow types, if any: the claim index alone, no row read. */
const firstQueuedSql = perFlowTypeCount((count) => `SELECT available_at AS availableAt FROM executions INDEXED BY executions_queued
    WHERE claimed_by IS NULL AND status IN ('asking', 'ready') AND available_at <= ? AND flow_type IN (${placeholders(count)})
    ORDER BY available_at LIMIT 1`);
const plainAttributesSql = "SELECT name, key, value FROM attributes INDEXED BY attributes_plain WHERE flow_id = ? AND key = ''";

/** The claim scan with each candidate's plain Attributes, for `count` Flow types: in the general path's claim order. */
const candidatesSql = perFlowTypeCount((count) => `SELECT ${executionColumns},
      (SELECT json_group_array(json_array(a.name, a.value)) FROM attributes a INDEXED BY attributes_plain WHERE a.flow_id = e.flow_id AND a.key = '') AS plainAttributes
    FROM executions e
    WHERE e.claimed_by IS NULL AND e.status IN ('asking', 'ready') AND e.available_at <= ? AND e.flow_type IN (${placeholders(count)})
      AND (e.expires_at IS NULL OR e.expires_at > ?)
    ORDER BY e.available_at LIMIT ${limitParameter}`);

type CandidateRow = ExecutionRow & { plainAttributes: string };

/** What the commit part of a {@link StepCommit} did, with the new execution it leased to the committing Worker, if any. */
type Applied = { outcome: "committed" | "fenced"; ended?: StepCommitReply["ended"]; handedOver?: ExecutionRow | undefined; othersQueued?: boolean } | { outcome: "fallback" };

export class SqliteOneRequest implements OneRequestOperations {
  /** A general transaction costs no round trip here: committing and claiming in one beats two. */
  readonly embedded = true;
  /** A commit appends its attempt's last Stream messages, saving their own transaction (and its sync on FULL). */
  readonly commitsStreams = true;
  private readonly host: OneRequestHost;
  private readonly statements: SqliteStatementRunner;

  constructor(host: OneRequestHost) {
    this.host = host;
    this.statements = {
      all: (sql, parameters) => host.statement(sql).all(...parameters),
      get: (sql, parameters) => host.statement(sql).get(...parameters),
      run: (sql, parameters) => host.statement(sql).run(...parameters),
    };
  }

  private run(sql: string, ...parameters: SQLInputValue[]): number {
    return this.host.statement(sql).run(...parameters);
  }

  private get<TRow>(sql: string, ...parameters: SQLInputValue[]): TRow | undefined {
    return this.host.statement(sql).get(...parameters) as TRow | undefined;
  }

  async commitStep(commit: StepCommit): Promise<StepCommitReply> {
    const reply = await this.commitAtomically(commit);
    if (reply.outcome === "committed") wakeStreamReaders(this.host, commit.streams ?? []);
    return reply;
  }

  private commitAtomically(commit: StepCommit): Promise<StepCommitReply> {
    return this.host.runAtomically((): StepCommitReply => {
      const applied = this.apply(commit);
      if (applied.outcome === "fallback") return { outcome: "fallback", claims: [], claimStopped: false };
      if (applied.handedOver !== undefined) {
        // Nothing older was queued, so a claim would have taken this very task first; the Worker's other free slots
        // take what comes after it.
        const execution = applied.handedOver;
        const plainAttributes = this.host.statement(plainAttributesSql).all(execution.flowId) as unknown as AttributeRow[];
        const claim = commit.claim;
        const rest: TaskClaimReply = claim !== undefined && claim.limit > 1 && applied.othersQueued === true ? this.claim(commit.workerId, { ...claim, limit: claim.limit - 1 }, commit.now) : { claims: [], claimStopped: false };
        // Nothing queued behind the handed-over task: it was all there was.
        const claimedAll = applied.othersQueued === true ? rest.claimedAll === true : true;
        return { outcome: applied.outcome, claims: [{ execution, plainAttributes }, ...rest.claims], claimStopped: rest.claimStopped, claimedAll, ended: applied.ended };
      }
      const claimed = commit.claim === undefined ? { claims: [], claimStopped: false } : this.claim(commit.workerId, commit.claim, commit.now);
      return { outcome: applied.outcome, ...claimed, ended: applied.ended };
    });
  }

  /** Fences, then writes what the general path would: Attributes, locks, movements or readiness, history and the Flow's counters. */
  private apply(commit: StepCommit): Applied {
    const { flowId, executionId, now } = commit;
    const fenced = this.get<FencedRow>(fenceSql, flowId, executionId);
    if (fenced === undefined || fenced.claimedBy !== commit.workerId || fenced.leaseToken !== commit.leaseToken) return { outcome: "fenced" };
    const expectedStatus = commit.method === "execute" ? "ready" : "asking";
    if (fenced.status !== expectedStatus || (commit.movements.length > 0 && fenced.flowStatus !== "running")) return { outcome: "fallback" };
    if (commit.method === "wait_until" && commit.ready === null) return { outcome: "fallback" };
    // Waits with conditions and publishes are not this store's to match (it does not offer commitsWaitsAndPublishes).
    if ((commit.wait ?? null) !== null || (commit.publishes?.length ?? 0) > 0) return { outcome: "fallback" };
    // Ending the Flow cancels its other executions: the general path does that.
    if (commit.finish !== null && this.get(otherExecutionSql, flowId, executionId) !== undefined) return { outcome: "fallback" };
    let seq = fenced.nextSeq;
    for (const write of commit.writes) {
      if (write.value === null) this.run(deleteAttributeSql, flowId, write.name, write.key);
      else this.run(upsertAttributeSql, flowId, write.name, write.key, write.value);
    }
    if (commit.holdsLocks) this.run(releaseLocksSql, flowId, executionId);
    let handedOver: ExecutionRow | undefined;
    let othersQueued = false;
    if (commit.method === "execute") {
      const handover = this.handoverOf(commit);
      othersQueued = handover?.othersQueued ?? false;
      for (const movement of commit.movements) {
        const queued: ExecutionRow = { ...movement, flowId, seq, executionId: String(seq) };
        const row = handover === undefined ? queued : leasedExecution(queued, commit.workerId, handover.times, now);
        if (handover !== undefined) handedOver = row;
        this.run(executionInsertSql, ...executionFields.map((field) => row[field]));
        seq += 1;
      }
      this.run(deleteExecutionSql, flowId, executionId);
    } else if (commit.ready !== null) {
      this.run(makeReadySql, now, now, commit.ready.expiresAt, commit.ready.waitResult, flowId, executionId);
    }
    if (commit.historyKeep > 0) {
      this.run(historySql, flowId, seq, executionId, fenced.stepType, commit.method, fenced.attempt, commit.startedAt, now, commit.outcome);
      seq += 1;
    }
    const changed = seq !== fenced.nextSeq || commit.writes.length > 0;
    let ended: StepCommitReply["ended"];
    if (commit.finish !== null) {
      const { status, output, error } = commit.finish;
      ended = this.get<NonNullable<StepCommitReply["ended"]>>(finishFlowSql, status, output, error, seq, changed ? 1 : 0, now, flowId);
    } else if (changed) {
      this.run(bumpFlowSql, seq, now, flowId);
    }
    // As the general path: trim when the sequence crosses a multiple of 64.
    if (commit.historyKeep > 0 && changed && Math.floor(seq / 64) !== Math.floor(fenced.nextSeq / 64)) {
      this.run(trimHistorySql, flowId, flowId, commit.historyKeep);
    }
    // Last, as the general path appends them after everything else the commit writes.
    appendStreamRows(this.statements, commit.streams ?? []);
    return { outcome: "committed", ended: ended === undefined ? undefined : { ...ended }, handedOver, othersQueued };
  }

  /**
   * The lease times for handing a commit's one new movement straight to the
   * committing Worker, or undefined when its claim must scan the queue: it
   * claims nothing, the movement is not one the store may claim alone, or
   * another task is queued ahead of it (the claim takes the lowest
   * `available_at` first; a movement that continues a chain keeps the
   * chain's place). With nothing ahead, the claim in the same transaction
   * would take this task first, so inserting it leased writes the same row
   * and saves the scan. `othersQueued`: tasks wait behind it, for the
   * Worker's other free slots.
   */
  private handoverOf(commit: StepCommit): { times: LeaseTimes; othersQueued: boolean } | undefined {
    const times = handoverLeaseTimesOf(commit);
    const movement = commit.movements[0];
    if (times === undefined || commit.claim === undefined || movement === undefined) return undefined;
    const { flowTypes } = commit.claim;
    const first = this.host.statement(firstQueuedSql(flowTypes.length)).get(commit.now, ...flowTypes) as { availableAt: number } | undefined;
    if (first === undefined) return { times, othersQueued: false };
    return first.availableAt < movement.availableAt ? undefined : { times, othersQueued: true };
  }

  claimTasks(claim: TaskClaim): Promise<TaskClaimReply> {
    return this.host.runAtomically(() => this.claim(claim.workerId, claim.claim, claim.now));
  }

  /** Leases queued tasks in claim order while the catalog covers them; stops at the first it does not. */
  private claim(workerId: string, claim: StepCommitClaim, now: number): TaskClaimReply {
    const { flowTypes, catalog, limit } = claim;
    if (limit <= 0 || flowTypes.length === 0) return { claims: [], claimStopped: false };
    // One candidate more than it may take tells whether it took all there was.
    const candidates = this.host.statement(candidatesSql(flowTypes.length)).all(now, ...flowTypes, now, limit + 1) as unknown as CandidateRow[];
    const claims: StoreClaim[] = [];
    for (const candidate of candidates.slice(0, limit)) {
      const times = claimLeaseTimesOf(catalog, candidate);
      if (times === undefined) return { claims, claimStopped: true };
      const { plainAttributes, ...queued } = candidate;
      const execution = leasedExecution(queued, workerId, times, now);
      this.run(leaseSql, workerId, execution.leaseToken, execution.attempt, execution.executeClaims, execution.deadlineAt, execution.leaseExpiresAt, execution.flowId, execution.executionId);
      claims.push({ execution, plainAttributes: plainAttributesOf(plainAttributes) });
    }
    return { claims, claimStopped: false, claimedAll: candidates.length <= limit };
  }

  startFlow(start: FlowStart): Promise<FlowStartReply> {
    return this.host.runAtomically((): FlowStartReply => {
      const { flow, startExecution } = start;
      if (this.run(insertFlowSql, ...flowFields.map((field) => flow[field])) === 1) {
        if (startExecution !== null) this.run(executionInsertSql, ...executionFields.map((field) => startExecution[field]));
        return { created: true };
      }
      const existing = this.get<Pick<FlowRow, "flowType" | "status" | "requestId">>(existingFlowSql, flow.flowId);
      if (existing === undefined) throw new Error(`Flow ${flow.flowId} was neither inserted nor found`);
      return { created: false, existing: { ...existing } };
    });
  }

  readFlow(flowId: string): Promise<FlowRead | undefined> {
    return this.host.runAtomically((): FlowRead | undefined => {
      const flow = this.get<FlowRow>(readFlowSql, flowId);
      if (flow === undefined) return undefined;
      return { flow, executions: this.host.statement(listExecutionsSql).all(flowId) as unknown as ExecutionRow[] };
    });
  }
}

function plainAttributesOf(text: string): AttributeRow[] {
  if (text === "[]") return [];
  return (JSON.parse(text) as [string, string][]).map(([name, value]) => ({ name, key: "", value }));
}
