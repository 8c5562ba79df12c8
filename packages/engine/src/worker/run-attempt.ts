import type { EncodedMovement } from "../flow/flow-transaction.ts";
import { jsonCodec } from "../internal/codec.ts";
import { encodeValue } from "../internal/encode.ts";
import { InvalidDefinitionError } from "../errors/invalid-definition-error.ts";
import { attemptErrorOf, type AttemptError } from "../step/attempt-failure.ts";
import type { StepDecision } from "../step/decision.ts";
import { stepOf } from "../step/execution-options.ts";
import type { RecoveryError } from "../step/recovery-error.ts";
import { storedMovementOptions } from "../step/step-options.ts";
import type { StoredWaitResult } from "../step/stored-conditions.ts";
import type { Store } from "../store/store.ts";
import { anyOf, type Conditions } from "../timer/condition.ts";
import { appendToStream } from "../stream/append-to-stream.ts";
import { AttemptContext } from "./attempt-context.ts";
import type { ClaimedAttempt } from "./claim-tasks.ts";
import { commitAttempt, type AttemptOutcome, type ClaimNext, type PreparedDecision } from "./commit-attempt.ts";
import type { RunningAttempt } from "./worker.ts";

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
function timeoutAfter(ms: number): { promise: Promise<AttemptError>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<AttemptError>((resolve) => {
    timer = setTimeout(() => resolve({ type: "StepTimeout", message: `the attempt ran longer than its method timeout of ${ms} ms`, terminal: false }), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/**
 * Runs one claimed attempt and commits what it produced. Returns the tasks
 * the commit claimed next for this Worker (see `commitAttempt`).
 */
export async function runAttempt(
  store: Store,
  workerId: string,
  running: RunningAttempt,
  onError: (error: unknown) => void,
  next: () => ClaimNext | undefined,
): Promise<ClaimedAttempt[]> {
  const { claim, abort } = running;
  const { execution } = claim;
  let checkpoint = execution.checkpoint ?? undefined;
  const services = {
    flow: claim.flow,
    flowId: execution.flowId,
    stepType: execution.stepType,
    executionId: execution.executionId,
    attempt: execution.attempt,
    deadline: new Date(execution.deadlineAt ?? Date.now()),
    signal: abort.signal,
    checkpoint,
    recoveryError: execution.recoveryError === null ? undefined : (JSON.parse(execution.recoveryError) as RecoveryError),
    waitResult: execution.waitResult === null ? undefined : (JSON.parse(execution.waitResult) as StoredWaitResult),
    maxValueBytes: store.maxValueBytes,
    heartbeat: async (text: string | undefined) => {
      if (text !== undefined) checkpoint = text;
      const alive = await heartbeatAttempt(store, claim, workerId, checkpoint);
      if (!alive) abort.abort(new Error("the execution was cancelled or its lease was lost"));
    },
    writeStream: async (stream: string, capacityBytes: number, value: string) => {
      await appendToStream(store, execution.flowId, claim.flow.flowType, stream, capacityBytes, value);
    },
  };
  const context = new AttemptContext(claim.snapshot, services);
  const remainingMs = Math.max(0, (execution.deadlineAt ?? Date.now()) - Date.now());
  const timeout = timeoutAfter(remainingMs);
  let outcome: AttemptOutcome;
  try {
    const handlerResult = (async (): Promise<AttemptOutcome> => {
      if (claim.method === "wait_until") {
        const returned = (await claim.options.step.waitUntil?.(context, claim.input)) ?? null;
        const conditions: Conditions | null = returned === null || "mode" in returned ? returned : anyOf(returned);
        return { kind: "wait_until", conditions, writes: context.writes.values(), publishes: context.publishes };
      }
      const decision = await claim.options.step.execute(context, claim.input);
      return { kind: "execute", decision: prepareDecision(claim, decision, store.maxValueBytes), writes: context.writes.values(), publishes: context.publishes };
    })();
    const raced = await Promise.race([handlerResult, timeout.promise]);
    if ("kind" in raced) {
      outcome = raced;
    } else {
      abort.abort(new Error(raced.message));
      handlerResult.catch(() => undefined);
      outcome = { kind: "error", error: raced };
    }
  } catch (error) {
    outcome = { kind: "error", error: attemptErrorOf(error) };
  } finally {
    timeout.cancel();
  }
  if (abort.signal.aborted && outcome.kind !== "error") {
    // Cancelled or superseded: the commit below is fenced anyway, so skip the round trip.
    return [];
  }
  try {
    return await commitAttempt(store, claim, workerId, outcome, next());
  } catch (error) {
    onError(error);
    // The outcome itself could not be committed (for example an oversized value): fail the attempt instead.
    return await commitAttempt(store, claim, workerId, { kind: "error", error: attemptErrorOf(error) }, next()).catch((secondError: unknown) => {
      onError(secondError);
      return [];
    });
  }
}

/** Extends the lease (and stores the checkpoint); false when the attempt no longer holds it. */
async function heartbeatAttempt(store: Store, claim: ClaimedAttempt, workerId: string, checkpoint: string | undefined): Promise<boolean> {
  const { execution, methodOptions } = claim;
  const now = Date.now();
  return store.transaction(async (transaction) => {
    const current = await transaction.getExecution(execution.flowId, execution.executionId);
    if (current?.claimedBy !== workerId || current.leaseToken !== execution.leaseToken) return false;
    const deadlineAt = current.deadlineAt ?? now;
    const leaseExpiresAt = methodOptions.heartbeatTimeoutMs === null ? deadlineAt : Math.min(deadlineAt, now + methodOptions.heartbeatTimeoutMs);
    await transaction.updateExecution(execution.flowId, execution.executionId, { leaseExpiresAt, checkpoint: checkpoint ?? null });
    return true;
  });
}
