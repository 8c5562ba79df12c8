import type { EncodedMovement } from "../flow/flow-transaction.ts";
import { jsonCodec } from "../internal/codec.ts";
import { encodeValue } from "../internal/encode.ts";
import { InvalidDefinitionError } from "../errors/invalid-definition-error.ts";
import { PerdureError } from "../errors/perdure-error.ts";
import { StoreClosedError } from "../errors/store-closed-error.ts";
import { attemptErrorOf, type AttemptError } from "./attempt-failure.ts";
import type { FailedAttempt } from "./failed-attempt.ts";
import type { StepDecision } from "../step/decision.ts";
import { stepOf } from "../step/execution-options.ts";
import type { RecoveryError } from "../step/recovery-error.ts";
import { storedMovementOptions } from "../step/step-options.ts";
import type { StoredWaitResult } from "../step/stored-conditions.ts";
import type { StreamAppend } from "../store/step-commit.ts";
import type { Store } from "../store/store.ts";
import { appendStreamBatch, appendStreamsInTransaction, wakeStreamReaders } from "../stream/stream-batch.ts";
import { anyOf, type Conditions } from "../condition/condition.ts";
import { AttemptStreamWriter } from "./attempt-stream-writer.ts";
import { AttemptContext } from "./attempt-context.ts";
import type { ClaimLedger } from "./claim-ledger.ts";
import type { LocalTimers } from "../internal/local-timers.ts";
import type { ClaimedAttempt } from "./claim-tasks.ts";
import { commitAttempt, type AttemptOutcome, type ClaimNext, type PreparedDecision } from "./commit-attempt.ts";
import type { RunningAttempt } from "./running-attempt.ts";
import type { WorkerMetrics } from "./worker-metrics.ts";

/** Encodes a decision before the commit, so a bad value fails the attempt rather than the transaction. */
function prepareDecision(claim: ClaimedAttempt, decision: StepDecision, maxValueBytes: number): PreparedDecision {
  const kinds = ["move", "dead_end", "complete", "fail"];
  if (typeof decision !== "object" || decision === null || !kinds.includes(decision.kind)) {
    throw new InvalidDefinitionError(
      `Step ${claim.execution.stepType} of Flow ${claim.flow.flowType} returned ${JSON.stringify(decision)}; return moveTo(), moveToMany(), deadEnd(), completeFlow() or failFlow()`,
    );
  }
  const cancelStepTypes = decision.cancelStepTypes ?? [];
  for (const stepType of cancelStepTypes) stepOf(claim.flow, stepType);
  const movements: EncodedMovement[] = decision.kind !== "move" ? [] : decision.movements.map((movement) => {
    stepOf(claim.flow, movement.stepType);
    return {
      stepType: movement.stepType,
      input: encodeValue(`input of Step ${movement.stepType}`, jsonCodec, (movement.input ?? null) as never, maxValueBytes),
      options: movement.options === undefined ? null : storedMovementOptions(movement.options),
      recoveryError: null,
    };
  });
  return {
    kind: decision.kind,
    movements,
    cancelStepTypes,
    output: decision.kind === "complete" ? encodeValue(`output of Flow ${claim.flow.flowType}`, jsonCodec, (decision.output ?? null) as never, maxValueBytes) : undefined,
    error: decision.kind === "fail" ? String(decision.error) : undefined,
  };
}

/** A method-timeout race; `cancel` clears its timer once the handler settled. */
function timeoutAfter(timers: LocalTimers, ms: number): { promise: Promise<AttemptError>; cancel: () => void } {
  let cancel = (): void => undefined;
  const promise = new Promise<AttemptError>((resolve) => {
    cancel = timers.after(ms, () => resolve({ type: "StepTimeout", message: `the attempt ran longer than its method timeout of ${ms} ms`, terminal: false }));
  });
  return { promise, cancel };
}

/** What an attempt needs from its Worker besides the store. */
export interface AttemptEnvironment {
  onError: (error: unknown) => void;
  /** Told of every attempt whose handler threw or timed out. @default none */
  onAttemptFailed?: ((failure: FailedAttempt) => void) | undefined;
  timers: LocalTimers;
  /**
   * Called once the commit landed (or was fenced off), before the tasks it
   * claimed are launched: the attempt's slot is free from then on (the claim
   * ledger holds it for those tasks until they launch), so those
   * tasks' own commits count it as free. `claimedAll` says the commit's
   * claim took fewer tasks than it asked for: when it committed, nothing
   * else was claimable for this Worker.
   */
  onCommitted?: (claimedAll: boolean) => void;
  /** Counts the attempt's end. @default none */
  metrics?: WorkerMetrics | undefined;
  /** How long a Stream write waits to join a batch (`WorkerOptions.streamBatchWindowMs`). @default streamFlushWindowMs */
  streamBatchWindowMs?: number | undefined;
}

/**
 * Runs one claimed attempt and commits what it produced. The commit claims
 * the Worker's next tasks through `ledger`, which launches them; returns
 * them too (see `commitAttempt`).
 */
export async function runAttempt(
  store: Store,
  workerId: string,
  running: RunningAttempt,
  environment: AttemptEnvironment,
  next: () => ClaimNext | undefined,
  ledger: ClaimLedger,
): Promise<readonly ClaimedAttempt[]> {
  const { claim, abort } = running;
  const { execution } = claim;
  let checkpoint = execution.checkpoint ?? undefined;
  const dispatchedAt = store.clock.now();
  const streamWriter = new AttemptStreamWriter(store, execution.flowId, claim.flow.flowType, environment.timers, environment.onError, environment.streamBatchWindowMs);
  // Whether the store's commits and heartbeats carry Stream messages (a general transaction always can).
  const carriesStreams = store.oneRequest === undefined || store.oneRequest.commitsStreams === true;
  const services = {
    flow: claim.flow,
    flowId: execution.flowId,
    stepType: execution.stepType,
    executionId: execution.executionId,
    attempt: execution.attempt,
    // The deadline is kept on the store's clock; a handler compares a Date with its own wall clock,
    // so it gets the same moment on this process's clock (they differ on a skewed machine).
    deadline: new Date(Date.now() + (execution.deadlineAt ?? dispatchedAt) - dispatchedAt),
    now: () => store.clock.now(),
    signal: abort.signal,
    checkpoint,
    recoveryError: execution.recoveryError === null ? undefined : (JSON.parse(execution.recoveryError) as RecoveryError),
    waitResult: execution.waitResult === null ? undefined : (JSON.parse(execution.waitResult) as StoredWaitResult),
    maxValueBytes: store.maxValueBytes,
    heartbeat: async (text: string | undefined) => {
      if (text !== undefined) checkpoint = text;
      // A heartbeat also stores what the attempt wrote to its Streams so far, in its own request where the store can:
      // a handler that heartbeats before a side effect knows its output is in the Stream before it.
      const alive = carriesStreams
        ? await streamWriter.sendWith((streams) => heartbeatAttempt(store, claim, workerId, checkpoint, streams))
        : (await Promise.all([heartbeatAttempt(store, claim, workerId, checkpoint, []), streamWriter.drain()]))[0];
      if (!alive) abort.abort(new Error("the execution was cancelled or its lease was lost"));
    },
    // Queued, not awaited: sent in batches, and the rest with the commit (see AttemptStreamWriter).
    writeStream: (stream: string, capacityBytes: number, value: string) => {
      streamWriter.write(stream, capacityBytes, value);
      return Promise.resolve();
    },
  };
  const context = new AttemptContext(claim.snapshot, services);
  // Measured from the store's clock now, so the race runs on local time from here on.
  const startedAt = store.clock.now();
  const remainingMs = Math.max(0, (execution.deadlineAt ?? startedAt) - startedAt);
  const timeout = timeoutAfter(environment.timers, remainingMs);
  let outcome: AttemptOutcome;
  try {
    const handlerResult = (async (): Promise<AttemptOutcome> => {
      if (claim.method === "wait_until") {
        const returned = (await claim.options.step.waitUntil?.(context, claim.input)) ?? null;
        const conditions: Conditions | null = returned === null || "mode" in returned ? returned : anyOf(returned);
        return { kind: "wait_until", conditions, writes: [...context.writes.values()], publishes: context.publishes };
      }
      const decision = await claim.options.step.execute(context, claim.input);
      return { kind: "execute", decision: prepareDecision(claim, decision, store.maxValueBytes), writes: [...context.writes.values()], publishes: context.publishes };
    })();
    const raced = await Promise.race([handlerResult, timeout.promise]);
    if ("kind" in raced) {
      outcome = raced;
    } else {
      abort.abort(new Error(raced.message));
      handlerResult.catch(() => undefined);
      outcome = { kind: "error", error: raced };
      if (running.released !== true) reportFailedAttempt(environment, claim, Object.assign(new Error(raced.message), { name: raced.type }));
    }
  } catch (error) {
    outcome = { kind: "error", error: attemptErrorOf(error) };
    // A released attempt's handler fails because its signal was aborted: not a failure to report.
    if (running.released !== true) reportFailedAttempt(environment, claim, error);
  } finally {
    timeout.cancel();
  }
  // Released by its closing Worker (the store already holds this attempt's end, and the Worker may be gone), or
  // cancelled or superseded (the commit would be fenced anyway): its last Stream messages are written alone.
  const commits = (): boolean => running.released !== true && !(abort.signal.aborted && outcome.kind !== "error");
  if (!commits()) {
    await streamWriter.drain();
    return [];
  }
  // What the attempt wrote to its Streams and has not sent yet reaches the store with its result, or just before it
  // on a store whose commits cannot carry it.
  const streams = carriesStreams ? await streamWriter.take() : await streamWriter.drain().then(() => []);
  if (!commits()) {
    await writeStreamsAlone(store, streams, environment.onError);
    return [];
  }
  if (outcome.kind === "error") environment.metrics?.attemptEnded(claim, { kind: "failed", errorType: outcome.error.type }, store.clock.now());
  const onCommitted = environment.onCommitted;
  const counted: AttemptEnvironment = outcome.kind === "error" || environment.metrics === undefined ? environment : {
    ...environment,
    onCommitted: (claimedAll) => {
      environment.metrics?.attemptEnded(claim, { kind: "committed" }, store.clock.now());
      onCommitted?.(claimedAll);
    },
  };
  return commitUntilSettled(store, claim, workerId, outcome, streams, counted, next, ledger);
}

/** Writes Stream messages outside a commit, reporting a failure as a failed batch is (a Stream is best-effort). */
async function writeStreamsAlone(store: Store, streams: readonly StreamAppend[], onError: (error: unknown) => void): Promise<void> {
  if (streams.length === 0) return;
  try {
    await appendStreamBatch(store, streams);
  } catch (error) {
    if (!StoreClosedError.isInstance(error)) onError(error);
  }
}

function reportFailedAttempt(environment: AttemptEnvironment, claim: ClaimedAttempt, error: unknown): void {
  if (environment.onAttemptFailed === undefined) return;
  const { execution } = claim;
  try {
    environment.onAttemptFailed({
      flowId: execution.flowId, flowType: claim.flow.flowType, stepType: execution.stepType, executionId: execution.executionId,
      method: claim.method, attempt: execution.attempt, error,
    });
  } catch (observerError) {
    // An observer's own failure must not change the attempt's outcome.
    environment.onError(observerError);
  }
}

/** Backoff between commits of an attempt while its store fails: 50 ms, doubling, up to 2 s. */
function commitRetryDelayMs(failures: number): number {
  return Math.min(2000, 50 * 2 ** Math.min(failures - 1, 6));
}

/** How long a closing Worker keeps trying to commit before it leaves the attempt to liveness recovery. */
const closingCommitPatienceMs = 10_000;

/**
 * Commits an attempt's outcome until the commit lands or is fenced off. An
 * outcome that cannot be stored (an oversized value, say) is committed as a
 * failed attempt instead. When the store itself fails (a database restart,
 * a dropped connection), the database still shows the attempt leased to
 * this live Worker, so giving up would leave its Flow stuck until the
 * method timeout: the Worker keeps trying, with backoff. Retrying a commit
 * whose first try did land is safe: the lease fence drops it. It stops when
 * the attempt's deadline passed (the lease has lapsed and recovery takes
 * the execution over) or, on a closing Worker, after a while (its liveness
 * lapses once it is gone). A failed try may still have claimed next tasks;
 * `ledger` finds those.
 */
async function commitUntilSettled(
  store: Store,
  claim: ClaimedAttempt,
  workerId: string,
  outcome: AttemptOutcome,
  streams: readonly StreamAppend[],
  environment: AttemptEnvironment,
  next: () => ClaimNext | undefined,
  ledger: ClaimLedger,
): Promise<readonly ClaimedAttempt[]> {
  const { onError, timers } = environment;
  let current = outcome;
  let failures = 0;
  // A fenced commit leaves the Stream messages it carried to be written alone, unless a try before it failed
  // in a way that leaves unknown whether it landed, messages and all.
  let streamsAfterFence = true;
  let closingSince: number | undefined;
  for (;;) {
    try {
      const claimNext = next();
      const limit = claimNext?.limit ?? 0;
      // The limit counts this attempt's own slot: busy until the commit lands, then held for the tasks it claimed until they launch.
      return await ledger.run(limit, async (hold) => {
        const claims = await commitAttempt(store, claim, workerId, current, claimNext, { appends: streams, afterFence: streamsAfterFence });
        if (claims.length > 0) hold(1);
        environment.onCommitted?.(claimNext !== undefined && claims.length < claimNext.limit);
        return claims;
      }, Math.max(0, limit - 1));
    } catch (error) {
      if (StoreClosedError.isInstance(error)) {
        onError(error);
        return [];
      }
      if (PerdureError.isInstance(error)) {
        onError(error);
        if (current.kind === "error") return [];
        current = { kind: "error", error: attemptErrorOf(error) };
        continue;
      }
      failures += 1;
      streamsAfterFence = false;
      // Once, then now and then: an outage would otherwise flood the log.
      if (failures === 1 || failures % 30 === 0) onError(error);
      const now = store.clock.now();
      if (next() === undefined) closingSince ??= now;
      const isPastDeadline = claim.execution.deadlineAt !== null && now > claim.execution.deadlineAt;
      if (isPastDeadline || (closingSince !== undefined && now - closingSince > closingCommitPatienceMs)) return [];
      await new Promise<void>((resolve) => timers.after(commitRetryDelayMs(failures), resolve));
    }
  }
}

/**
 * Extends the attempt's lease (and stores the checkpoint) and appends
 * `streams`, what it wrote so far, in one request or transaction; false when
 * the attempt no longer holds the lease (the messages are stored either way).
 */
async function heartbeatAttempt(store: Store, claim: ClaimedAttempt, workerId: string, checkpoint: string | undefined, streams: readonly StreamAppend[]): Promise<boolean> {
  const { execution, methodOptions } = claim;
  const now = store.clock.now();
  const operations = store.oneRequest;
  if (operations?.heartbeat !== undefined) {
    const heartbeat = {
      flowId: execution.flowId, executionId: execution.executionId, workerId, leaseToken: execution.leaseToken,
      now, heartbeatTimeoutMs: methodOptions.heartbeatTimeoutMs, checkpoint: checkpoint ?? null,
    };
    return operations.heartbeat(streams.length === 0 ? heartbeat : { ...heartbeat, streams });
  }
  const held = await store.transaction(async (transaction) => {
    const current = await transaction.getExecution(execution.flowId, execution.executionId);
    const holds = current?.claimedBy === workerId && current.leaseToken === execution.leaseToken;
    if (current !== undefined && holds) {
      const deadlineAt = current.deadlineAt ?? now;
      const leaseExpiresAt = methodOptions.heartbeatTimeoutMs === null ? deadlineAt : Math.min(deadlineAt, now + methodOptions.heartbeatTimeoutMs);
      await transaction.updateExecution(execution.flowId, execution.executionId, { leaseExpiresAt, checkpoint: checkpoint ?? null });
    }
    await appendStreamsInTransaction(transaction, streams);
    return holds;
  });
  wakeStreamReaders(store, streams);
  return held;
}
