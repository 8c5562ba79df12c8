/**
 * How long a call made for a person keeps calling again while a running
 * Step holds a lock its RPC declares: an approval, an answer, a plan's
 * approval, a Stop button. Pass it as `invokeRPC`'s `lockConflictRetryMs`.
 * A session Step holds `PendingInterrupts`, `PendingPlanExecution` or
 * `TurnCancellationRequest` only while its method runs, which is short; a
 * person waits for the answer instead of reading an error, and after this
 * long something is wrong (a stuck Step, no Worker) and the
 * `RpcLockConflictError` says so.
 *
 * @example
 * await client.invokeRPC(flow.resolveInterrupt, sessionId, { interruptId, approved: true }, { lockConflictRetryMs: personLockConflictRetryMs });
 */
export const personLockConflictRetryMs = 10_000;
