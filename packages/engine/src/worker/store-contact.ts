/**
 * Whether this Worker has been in touch with its store long enough to judge
 * other Workers' liveness. A store outage (a database restart, a network
 * cut) stops every Worker from writing its liveness row, so once the store
 * answers again every row looks lapsed, though those Workers are alive and
 * may hold finished attempts whose commits they are retrying. A Worker that
 * itself lost the store therefore takes over no attempt for a lapsed
 * liveness until its own liveness writes have gone through, without a gap,
 * for a whole liveness timeout: by then every live Worker has written its
 * row again and committed what it held.
 */
export class StoreContact {
  private readonly livenessTimeoutMs: number;
  /** When the last liveness write went through, on the store's clock. */
  private lastWrittenAt: number | undefined;
  /** When the current run of liveness writes without a gap began. */
  private inTouchSince = Infinity;

  constructor(livenessTimeoutMs: number) {
    this.livenessTimeoutMs = livenessTimeoutMs;
  }

  /**
   * Records a liveness write that went through at `writtenAt`. A gap of
   * more than half the liveness timeout since the previous one (writes go
   * every fifth of it) means the store did not answer meanwhile.
   */
  written(writtenAt: number): void {
    if (this.lastWrittenAt === undefined || writtenAt - this.lastWrittenAt > this.livenessTimeoutMs / 2) this.inTouchSince = writtenAt;
    this.lastWrittenAt = writtenAt;
  }

  /** True when a liveness write went through within `withinMs` before `now`. */
  hasWrittenWithin(now: number, withinMs: number): boolean {
    return this.lastWrittenAt !== undefined && now - this.lastWrittenAt <= withinMs;
  }

  /** True when other Workers have had a whole liveness timeout, since the store last answered this one, to write their rows. */
  judgesLiveness(now: number): boolean {
    return now - this.inTouchSince >= this.livenessTimeoutMs;
  }
}
