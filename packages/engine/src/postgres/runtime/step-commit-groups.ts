/**
 * Group commit for the PostgreSQL store's one-request Step commits: commits
 * that arrive while a group is on its way travel together in the next one,
 * as one statement, one transaction and one WAL flush. A Worker with one
 * Step in flight sends alone and waits for nobody; under load, the group
 * grows to what arrived during one round trip.
 *
 * Each member runs in a block of its own inside the group's transaction
 * (`perdure_commit_steps`), so a member that fails is rolled back alone and
 * its error is its own; fencing is the member's, as when it commits alone.
 * A member that would wait for its Flow's lock, or that lost a deadlock or
 * serialization race, is sent again on its own.
 */

/** The function's answer for one commit, as JSON. */
export type StepCommitAnswer = Record<string, unknown> & { outcome: string };

/** How groups reach the database. */
export interface StepCommitSender {
  /** One commit as its own statement (it may wait for its Flow's lock). */
  single(request: Record<string, unknown>, catalogText: string | null): Promise<StepCommitAnswer>;
  /**
   * Several commits in one statement; answers in request order. Each
   * request's `catalogIndex` points into `catalogTexts`. `withStreams`: some
   * request carries Stream messages (`streams`).
   */
  group(requestsText: string, catalogTexts: readonly (string | null)[], withStreams: boolean): Promise<StepCommitAnswer[]>;
}

interface Member {
  request: Record<string, unknown> & { flowId: string };
  catalogText: string | null;
  resolve(answer: StepCommitAnswer): void;
  reject(error: unknown): void;
}

/** SQLSTATEs after which a member, sent again alone, can succeed: lock not available, deadlock, serialization failure. */
const retryAloneCodes = new Set(["55P03", "40P01", "40001"]);

/** A member's own failure inside a group, with the SQLSTATE the server gave it. */
export class GroupMemberError extends Error {
  override readonly name = "GroupMemberError";
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export interface StepCommitGroupOptions {
  /** Groups on their way at once. */
  maxGroupsInFlight: number;
  /** Commits in one group at most. */
  maxGroupSize: number;
}

export class StepCommitGroups {
  private readonly sender: StepCommitSender;
  private readonly options: StepCommitGroupOptions;
  private readonly pending: Member[] = [];
  private inFlight = 0;

  constructor(sender: StepCommitSender, options: StepCommitGroupOptions) {
    this.sender = sender;
    this.options = options;
  }

  commit(request: Member["request"], catalogText: string | null): Promise<StepCommitAnswer> {
    return new Promise((resolve, reject) => {
      this.pending.push({ request, catalogText, resolve, reject });
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.options.maxGroupsInFlight && this.pending.length > 0) {
      const members = this.pending.splice(0, this.options.maxGroupSize);
      this.inFlight += 1;
      void this.send(members).finally(() => {
        this.inFlight -= 1;
        this.flush();
      });
    }
  }

  private async send(members: Member[]): Promise<void> {
    if (members.length === 1) {
      const [member] = members as [Member];
      await this.sendAlone(member);
      return;
    }
    // One lock order for every group, so two groups never wait for each other in a circle.
    members.sort((left, right) => (left.request.flowId < right.request.flowId ? -1 : left.request.flowId > right.request.flowId ? 1 : 0));
    const catalogIndexes = new Map<string | null, number>();
    const requests = members.map((member) => {
      let catalogIndex = catalogIndexes.get(member.catalogText);
      if (catalogIndex === undefined) {
        catalogIndex = catalogIndexes.size;
        catalogIndexes.set(member.catalogText, catalogIndex);
      }
      return { ...member.request, catalogIndex, noWait: true };
    });
    let answers: StepCommitAnswer[];
    try {
      answers = await this.sender.group(JSON.stringify(requests), [...catalogIndexes.keys()], members.some((member) => "streams" in member.request));
    } catch (error) {
      for (const member of members) member.reject(error);
      return;
    }
    const alone: Promise<void>[] = [];
    members.forEach((member, index) => {
      const answer = answers[index];
      if (answer === undefined) {
        member.reject(new Error(`the PostgreSQL group commit answered ${answers.length} of ${members.length} commits`));
      } else if (answer.outcome !== "error") {
        member.resolve(answer);
      } else {
        const code = String(answer["code"]);
        if (retryAloneCodes.has(code)) alone.push(this.sendAlone(member));
        else member.reject(new GroupMemberError(code, `perdure postgres: a Step commit of Flow ${member.request.flowId} failed: ${String(answer["message"])}`));
      }
    });
    await Promise.all(alone);
  }

  private async sendAlone(member: Member): Promise<void> {
    try {
      member.resolve(await this.sender.single(member.request, member.catalogText));
    } catch (error) {
      member.reject(error);
    }
  }
}
