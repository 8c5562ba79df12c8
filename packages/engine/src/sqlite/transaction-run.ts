/**
 * One run of a store transaction's work on the process's SQLite connection,
 * holding SQLite's write lock only while the event loop cannot turn.
 *
 * The work runs inside `BEGIN IMMEDIATE` as long as it only waits on the
 * store, whose calls answer at once: that is one uninterrupted stretch of
 * microtasks, during which no timer, I/O callback or other process's turn can
 * come. When the microtask queue runs dry and the work is still not done, it
 * is waiting on something else (an RPC handler awaiting a timer or I/O), so
 * the run lets go: it records what each of its statements gave back, rolls
 * back, and frees the connection and the lock. Its next store call queues
 * for the connection, takes the lock again and replays the statements; if
 * every one gives back what it did before, the work carries on as if it had
 * held the lock all along. If not, another transaction changed what the work
 * read, and the run ends as a conflict: the caller runs the work again.
 */
import type { SQLInputValue } from "node:sqlite";
import type { MemberSettled } from "./commit-group.ts";
import type { PreparedStatement } from "./prepared-statement.ts";
import { SqliteTransactionConflict } from "./sqlite-transaction-conflict.ts";
import { mayWrite, outcomeOf, runStatement, sameOutcome, type LoggedStatement, type StatementKind, type StatementOutcome } from "./statement-log.ts";

/** The statements of one transaction run, as `SqliteTransaction` uses them. */
export interface TransactionStatements {
  /** Whether statements can run now; when not, `attach()` first. */
  readonly attached: boolean;
  /** Waits for the connection and the write lock, and replays the run so far; rejects when the run can no longer commit. */
  attach(): Promise<void>;
  all(sql: string, parameters: SQLInputValue[]): Record<string, unknown>[];
  get(sql: string, parameters: SQLInputValue[]): Record<string, unknown> | undefined;
  run(sql: string, parameters: SQLInputValue[]): number;
}

/** What a run needs from the connection it runs on. */
export interface TransactionHost {
  /** Starts the run's part of the connection's group commit (see `commit-group.ts`). */
  beginMember(): void;
  /** Keeps the run's writes for the group's COMMIT; `settled` hears when it landed, or why not. */
  commitMember(settled: MemberSettled): void;
  /** Undoes the run's writes only. */
  rollbackMember(): void;
  /** Commits the open group, if any: before a transaction of its own. */
  commitGroup(): void;
  readonly busyTimeoutMs: number;
  /** Runs `job` once no run holds the connection, after the jobs queued before it. */
  whenFree(job: () => void): void;
  /** Keeps the connection for `run` until `release()`. */
  hold(run: object): void;
  /** Frees the connection for the next queued job. */
  release(): void;
  exec(sql: string): void;
  statement(sql: string): PreparedStatement;
  readonly inTransaction: boolean;
}

/** How a run ended. `conflict`: what it read changed while it did not hold the lock; run the work again. */
export type RunOutcome<TResult> = { kind: "committed"; value: TResult } | { kind: "failed"; error: unknown } | { kind: "conflict" };

type WorkOutcome<TResult> = { ok: true; value: TResult } | { ok: false; error: unknown };

/** Why a run can no longer commit: `conflict` (run the work again) or a failure to take the lock back. */
interface Broken {
  conflict: boolean;
  error: Error;
}

function brokenOutcome<TResult>(broken: Broken): RunOutcome<TResult> {
  return broken.conflict ? { kind: "conflict" } : { kind: "failed", error: broken.error };
}

/** `error` as an Error: what a store call rejects with. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

export class TransactionRun<TResult> implements TransactionStatements {
  private readonly host: TransactionHost;
  private readonly work: (statements: TransactionStatements) => Promise<TResult>;
  private phase: "queued" | "attached" | "detached" | "done" = "queued";
  private readonly log: LoggedStatement[] = [];
  private writes = false;
  /** Set when the run can no longer commit; every later statement throws it. */
  private broken: Broken | undefined;
  private reattaching: Promise<void> | undefined;
  private workOutcome: WorkOutcome<TResult> | undefined;
  private settle: (outcome: RunOutcome<TResult>) => void = () => undefined;
  /** Counts the stretches during which the run held the lock, so a late check of an earlier one does nothing. */
  private stretch = 0;
  private statementsAtCheck = 0;
  /** Whether the run holds a member's part of the connection's group commit (from its first stretch until it commits, rolls back or lets go). */
  private member = false;

  constructor(host: TransactionHost, work: (statements: TransactionStatements) => Promise<TResult>) {
    this.host = host;
    this.work = work;
  }

  /** Queues the run on its connection; resolves once it committed, failed or met a conflict. */
  execute(): Promise<RunOutcome<TResult>> {
    return new Promise((resolve) => {
      this.settle = resolve;
      this.host.whenFree(() => this.begin());
    });
  }

  get attached(): boolean {
    return this.phase === "attached";
  }

  attach(): Promise<void> {
    if (this.phase === "attached") return Promise.resolve();
    if (this.broken !== undefined) return Promise.reject(this.broken.error);
    if (this.phase === "done") return Promise.reject(new Error("this SQLite transaction already ended; await every store call inside the transaction"));
    this.reattaching ??= new Promise<void>((resolve, reject) => this.host.whenFree(() => {
      this.reattaching = undefined;
      const replayed = this.beginAndReplay();
      if (replayed !== undefined) {
        this.broken = replayed;
        reject(replayed.error);
        return;
      }
      this.holdLock();
      resolve();
    }));
    return this.reattaching;
  }

  all(sql: string, parameters: SQLInputValue[]): Record<string, unknown>[] {
    return this.runLogged("all", sql, parameters) as Record<string, unknown>[];
  }

  get(sql: string, parameters: SQLInputValue[]): Record<string, unknown> | undefined {
    return this.runLogged("get", sql, parameters) as Record<string, unknown> | undefined;
  }

  run(sql: string, parameters: SQLInputValue[]): number {
    return this.runLogged("run", sql, parameters) as number;
  }

  private runLogged(kind: StatementKind, sql: string, parameters: SQLInputValue[]): unknown {
    if (this.broken !== undefined) throw this.broken.error;
    if (this.phase !== "attached") throw new Error("a SQLite store call ran outside its transaction; await attach() first");
    this.log.push({ kind, sql, parameters, outcome: undefined });
    if (!this.writes && mayWrite(kind, sql)) this.writes = true;
    return runStatement(this.host.statement(sql), kind, parameters);
  }

  /** Has the connection: takes the write lock (or joins the open group) and starts the work. */
  private begin(): void {
    try {
      this.host.beginMember();
      this.member = true;
    } catch (error) {
      this.finish({ kind: "failed", error });
      return;
    }
    this.holdLock();
    let running: Promise<TResult>;
    try {
      running = this.work(this);
    } catch (error) {
      this.onWorkSettled({ ok: false, error });
      return;
    }
    running.then((value) => this.onWorkSettled({ ok: true, value }), (error: unknown) => this.onWorkSettled({ ok: false, error }));
  }

  private holdLock(): void {
    this.phase = "attached";
    this.host.hold(this);
    this.stretch += 1;
    this.statementsAtCheck = this.log.length;
    this.checkLater(this.stretch);
  }

  /**
   * Checks once the microtask queue ran dry. A tick queued from a microtask
   * runs only after the whole queue drained, so a work that waits only on
   * the store is done by then; one that made store calls meanwhile gets
   * another look, in case it waits on ticks.
   */
  private checkLater(stretch: number): void {
    queueMicrotask(() => process.nextTick(() => {
      if (this.phase !== "attached" || this.stretch !== stretch) return;
      if (this.log.length !== this.statementsAtCheck) {
        this.statementsAtCheck = this.log.length;
        this.checkLater(stretch);
        return;
      }
      this.letGo();
    }));
  }

  /** The work waits on something other than the store: record, roll back, and free the lock until its next call. */
  private letGo(): void {
    const dataVersion = this.dataVersion();
    this.rollback();
    // The members before this one keep their writes; what this run recorded begins from them.
    this.host.commitGroup();
    this.recordOutcomes(dataVersion);
    this.phase = "detached";
    this.host.release();
  }

  /**
   * Replays the log on the state the run began from, to record what each
   * statement gave back (the work may since have changed the very objects
   * it got). Right after the rollback nobody else can have written, unless
   * another process took the lock in between; then nothing is recorded, and
   * the run can only end as a conflict.
   */
  private recordOutcomes(dataVersionBefore: number | undefined): void {
    for (const entry of this.log) entry.outcome = undefined;
    this.host.exec("PRAGMA busy_timeout = 0");
    try {
      this.host.exec("BEGIN IMMEDIATE");
    } catch {
      return;
    } finally {
      this.host.exec(`PRAGMA busy_timeout = ${this.host.busyTimeoutMs}`);
    }
    try {
      if (dataVersionBefore === undefined || this.dataVersion() !== dataVersionBefore) return;
      for (const entry of this.log) entry.outcome = outcomeOf(() => this.host.statement(entry.sql), entry.kind, entry.parameters);
    } finally {
      this.rollback();
    }
  }

  /** Takes the lock and replays the log; undefined when every statement gave back what it did before. */
  private beginAndReplay(): Broken | undefined {
    try {
      this.host.commitGroup();
      this.host.exec("BEGIN IMMEDIATE");
    } catch (error) {
      return { conflict: false, error: asError(error) };
    }
    for (const entry of this.log) {
      const outcome: StatementOutcome = outcomeOf(() => this.host.statement(entry.sql), entry.kind, entry.parameters);
      if (entry.outcome === undefined || !sameOutcome(entry.outcome, outcome)) {
        this.rollback();
        return { conflict: true, error: new SqliteTransactionConflict("what this SQLite transaction read changed while it waited on something other than the store") };
      }
    }
    return undefined;
  }

  private onWorkSettled(outcome: WorkOutcome<TResult>): void {
    this.workOutcome = outcome;
    // A store call still waiting for the lock goes first.
    if (this.reattaching !== undefined) void this.reattaching.then(() => this.finishWork(), () => this.finishWork());
    else this.finishWork();
  }

  private finishWork(): void {
    const outcome = this.workOutcome!;
    const held = this.phase === "attached";
    if (this.broken !== undefined || !outcome.ok) {
      if (held) this.rollback();
      this.end(held);
      this.finish(this.broken !== undefined ? brokenOutcome(this.broken) : { kind: "failed", error: outcome.ok ? undefined : outcome.error });
      return;
    }
    if (held) {
      this.commit(outcome.value);
      this.end(held);
      return;
    }
    this.phase = "done";
    // A run that only read needs no lock to end: what it returned held when it read it.
    if (!this.writes) {
      this.finish({ kind: "committed", value: outcome.value });
      return;
    }
    this.host.whenFree(() => {
      const replayed = this.beginAndReplay();
      if (replayed !== undefined) this.finish(brokenOutcome(replayed));
      else this.commit(outcome.value);
    });
  }

  /** The run is over; a run that held the connection frees it. */
  private end(held: boolean): void {
    this.phase = "done";
    if (held) this.host.release();
  }

  private commit(value: TResult): void {
    if (this.member) {
      this.member = false;
      // Settled once the group's COMMIT returns; a failed group runs its members again, unless this one was alone.
      this.host.commitMember((failure) => this.finish(failure === undefined ? { kind: "committed", value } : failure.alone ? { kind: "failed", error: failure.error } : { kind: "conflict" }));
      return;
    }
    try {
      this.host.exec("COMMIT");
    } catch (error) {
      this.rollback();
      this.finish({ kind: "failed", error });
      return;
    }
    this.finish({ kind: "committed", value });
  }

  private rollback(): void {
    if (this.member) {
      this.member = false;
      this.host.rollbackMember();
      return;
    }
    if (!this.host.inTransaction) return;
    try {
      this.host.exec("ROLLBACK");
    } catch (error) {
      // The connection rolls back by itself when a statement fails hard; nothing else is left to undo.
      if (this.host.inTransaction) throw error;
    }
  }

  private dataVersion(): number | undefined {
    return (this.host.statement("PRAGMA data_version").get() as { data_version?: number } | undefined)?.data_version;
  }

  private finish(outcome: RunOutcome<TResult>): void {
    this.settle(outcome);
  }
}
