/** `execute_plan` from the dev server, called again while a Step holds its lock. */
import { personLockConflictRetryMs, type AgentSessionFlow } from "@perdure/agents";
import type { Client } from "@perdure/engine";

/**
 * Approves plan revision `revision` with `execute_plan`; true when the
 * session took it and will start the executing turn. A lock conflict means a
 * Step or a concurrent call holds `PendingPlanExecution`; the call is made
 * again for up to `personLockConflictRetryMs`, and answers false when the
 * other call took the approval.
 */
export async function executePlanWithRetry(client: Client, flow: AgentSessionFlow, sessionId: string, revision: number): Promise<boolean> {
  return client.invokeRPC(flow.executePlan, sessionId, { revision }, { lockConflictRetryMs: personLockConflictRetryMs });
}
