/** `execute_plan` from the dev server, retried while `AwaitUserMessage` holds its lock. */
import type { AgentSessionFlow } from "@perdure/agents";
import { RpcLockConflictError, type Client } from "@perdure/engine";

/** How long a lock conflict is retried before the error reaches the caller. */
const lockRetryMs = 10_000;

/**
 * Approves plan revision `revision` with `execute_plan`; true when the
 * session took it and will start the executing turn. A lock conflict means a
 * Step or a concurrent call holds `PendingPlanExecution`; it is safe to retry,
 * and the retried call answers false when the other one took the approval.
 */
export async function executePlanWithRetry(client: Client, flow: AgentSessionFlow, sessionId: string, revision: number): Promise<boolean> {
  const deadline = Date.now() + lockRetryMs;
  for (;;) {
    try {
      return await client.invokeRPC(flow.executePlan, sessionId, { revision });
    } catch (error) {
      if (!RpcLockConflictError.isInstance(error) || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
