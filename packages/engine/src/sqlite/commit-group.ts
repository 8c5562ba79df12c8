/**
 * Group commit on the process's SQLite connection: transaction runs that
 * queue up for the connection while one is running share one SQLite
 * transaction, so one COMMIT (one fsync under `full`, one write of the
 * shared pages to the WAL) lands them all.
 *
 * Each run after the first is a member with a savepoint of its own (the
 * first needs none: undoing it is undoing the transaction). A member whose
 * work fails is rolled back to its savepoint and fails alone; the others go on.
 * A member's result is handed back only once the group's COMMIT returned,
 * so nothing is acknowledged before it is durable. The group commits as soon
 * as no run is waiting for the connection (a run alone commits at once, as
 * without grouping), when it reaches its size limit, or before anything that
 * needs a transaction of its own (a run taking the lock back to replay).
 * Members run one after another, each on what the ones before it wrote, so
 * the group is the same as those transactions run back to back; when its
 * COMMIT fails, every member runs again (alone: they each start afresh).
 */

/** What a group needs from its connection. */
export interface CommitGroupHost {
  exec(sql: string): void;
  readonly inTransaction: boolean;
  /** Whether another run waits for the connection now. */
  readonly runsWaiting: boolean;
}

/** Called once a member's part is settled: without an error when the group committed it. */
export type MemberSettled = (failure?: { error: unknown; alone: boolean }) => void;

const savepoint = "perdure_member";

/**
 * Members per group at most, so that a steady stream of commits still sees
 * each of its results after a bounded wait.
 */
const maxMembers = 64;

export class CommitGroup {
  private readonly host: CommitGroupHost;
  private open = false;
  /** Whether the running member took a savepoint (every member but the group's first). */
  private inSavepoint = false;
  private readonly settled: MemberSettled[] = [];

  constructor(host: CommitGroupHost) {
    this.host = host;
  }

  /** Starts a member: joins the open group, or opens one with `BEGIN IMMEDIATE`. */
  beginMember(): void {
    if (!this.open) {
      this.host.exec("BEGIN IMMEDIATE");
      this.open = true;
      this.inSavepoint = false;
      return;
    }
    this.host.exec(`SAVEPOINT ${savepoint}`);
    this.inSavepoint = true;
  }

  /** Keeps a member's writes; they commit with the group, and `settled` hears when. */
  commitMember(settled: MemberSettled): void {
    if (this.inSavepoint) this.host.exec(`RELEASE ${savepoint}`);
    this.settled.push(settled);
    if (!this.host.runsWaiting || this.settled.length >= maxMembers) this.commit();
  }

  /** Undoes one member's writes and leaves the group's. */
  rollbackMember(): void {
    if (this.host.inTransaction && !this.inSavepoint) {
      // The group's first member: nothing else is in the transaction yet.
      this.host.exec("ROLLBACK");
      this.open = false;
      return;
    }
    if (this.host.inTransaction) {
      this.host.exec(`ROLLBACK TO ${savepoint}`);
      this.host.exec(`RELEASE ${savepoint}`);
      return;
    }
    // A hard failure rolled the whole transaction back: the members before this one lost their writes too.
    this.open = false;
    for (const member of this.settled.splice(0)) member({ error: new Error("the SQLite transaction was rolled back"), alone: false });
  }

  /** Commits the open group, if any, and settles its members. */
  commit(): void {
    if (!this.open) return;
    this.open = false;
    const members = this.settled.splice(0);
    try {
      this.host.exec("COMMIT");
    } catch (error) {
      if (this.host.inTransaction) this.host.exec("ROLLBACK");
      for (const member of members) member({ error, alone: members.length === 1 });
      return;
    }
    for (const member of members) member();
  }
}
