import { RetryAfterError } from "../errors/retry-after-error.ts";
import type { FlowTransaction } from "../flow/flow-transaction.ts";
import type { ExecutionRow } from "../store/store.ts";
import { resolveExecutionOptions, type ExecutionOptions } from "../step/execution-options.ts";
import { StepAttemptProgress, type RecoveryError } from "../step/recovery-error.ts";
import { retryDelayMs } from "../step/retry-policy.ts";

/** Why an attempt failed, as persisted. */
export interface AttemptError {
  /** Error class name, or `StepTimeout`, `HeartbeatTimeout`, `WorkerLost`, `WorkerReleased`, `RetryWindowClosed`. */
  type: string;
  message: string;
  /** No retry: go straight to the failure route. */
  terminal: boolean;
  /** The least wait before the next attempt the handler asked for (`RetryAfterError`). */
  retryAfterMs?: number;
  /** Queue the next attempt at once: the attempt did not fail, its Worker handed it back (`WorkerReleased`). */
  withoutBackoff?: boolean;
}

/** Turns whatever a handler threw into an {@link AttemptError}. */
export function attemptErrorOf(thrown: unknown): AttemptError {
  if (thrown instanceof Error) {
    const code = (thrown as { code?: unknown }).code;
    // Errors that fail the same way on every attempt skip the retries.
    const terminal = code === "terminal" || code === "unknown_step" || code === "invalid_definition" || code === "value_too_large"
      || code === "unloaded_state" || code === "invalid_input";
    const retryAfterMs = RetryAfterError.isInstance(thrown) ? thrown.retryAfterMs : 0;
    return { type: thrown.name, message: thrown.message, terminal, ...(retryAfterMs > 0 ? { retryAfterMs } : {}) };
  }
  return { type: "Error", message: String(thrown), terminal: false };
}

/** The execution's options, or undefined when its Step type (or route) is no longer defined. */
export function tryResolveExecutionOptions(flowTransaction: FlowTransaction, execution: ExecutionRow): ExecutionOptions | undefined {
  try {
    return resolveExecutionOptions(flowTransaction.flow, execution.stepType, execution.movementOptions);
  } catch {
    return undefined;
  }
}

/**
 * Records a failed attempt of a claimed execution: it is queued again after
 * its backoff, or, once retries are exhausted, handed to its failure route.
 */
export async function failAttempt(flowTransaction: FlowTransaction, execution: ExecutionRow, error: AttemptError, startedAt: number): Promise<void> {
  const options = tryResolveExecutionOptions(flowTransaction, execution);
  await flowTransaction.recordHistory({
    executionId: execution.executionId,
    stepType: execution.stepType,
    method: execution.status === "asking" ? "wait_until" : "execute",
    status: "failed",
    attempt: execution.attempt,
    startedAt,
    outcome: null,
    error: `${error.type}: ${error.message}`,
  });
  await flowTransaction.transaction.releaseLocks(flowTransaction.flowId, execution.executionId);
  if (options === undefined) {
    await routeFailure(flowTransaction, execution, { ...error, terminal: true });
    return;
  }
  const method = execution.status === "asking" ? options.waitUntil : options.execute;
  // A requested wait lengthens the backoff, but never past the policy's longest interval.
  const delay = error.withoutBackoff === true ? 0 : Math.max(retryDelayMs(method.retry, execution.attempt + 1), Math.min(error.retryAfterMs ?? 0, method.retry.maximumIntervalMs));
  const retryAt = flowTransaction.now + delay;
  const exhausted = error.terminal || execution.attempt >= method.retry.maximumAttempts || (execution.expiresAt !== null && retryAt >= execution.expiresAt);
  if (!exhausted) {
    await flowTransaction.transaction.updateExecution(flowTransaction.flowId, execution.executionId, {
      claimedBy: null,
      leaseExpiresAt: null,
      deadlineAt: null,
      availableAt: retryAt,
      lastError: JSON.stringify(error),
    });
    flowTransaction.noteTask(retryAt);
    return;
  }
  await routeFailure(flowTransaction, execution, error);
}

/**
 * Ends an execution whose retries are exhausted: moves to its failure route
 * with the same input and a recovery error, or fails the Flow.
 */
export async function routeFailure(flowTransaction: FlowTransaction, execution: ExecutionRow, error: AttemptError): Promise<void> {
  const options = tryResolveExecutionOptions(flowTransaction, execution);
  await flowTransaction.removeExecution(execution);
  const recoveryError: RecoveryError = {
    stepType: execution.stepType,
    type: error.type,
    message: error.message,
    attemptProgress: execution.executeClaims > 0 ? StepAttemptProgress.NOT_COMPLETED : StepAttemptProgress.NOT_STARTED,
    attempts: execution.executeClaims,
  };
  if (options?.failureRoute !== undefined) {
    await flowTransaction.schedule({ stepType: options.failureRoute, input: execution.input, options: null, recoveryError: JSON.stringify(recoveryError) });
    return;
  }
  await flowTransaction.finish("failed", { error: `Step ${execution.stepType} failed: ${error.type}: ${error.message}` });
}
