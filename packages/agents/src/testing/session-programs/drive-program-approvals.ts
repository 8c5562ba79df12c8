/**
 * The person of a session program: answers each pending approval as the
 * program says, through `resolve_interrupt`, reconciling from the store, so
 * a Worker process that replaces a killed one answers what it left.
 */
import { setTimeout as delay } from "node:timers/promises";
import { FlowNotFoundError, RpcLockConflictError, StoreClosedError, type Client } from "@perdure/engine";
import { injectedFaultOf } from "@perdure/engine/testing";
import type { AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { programToolCalls, type SessionProgram } from "./session-program.ts";

/**
 * Polls the session's pending interrupts until `signal` aborts or the store
 * closes, and resolves each approval with the program's decision. Lock
 * conflicts, injected store faults and other errors (logged) are retried on
 * the next poll; an approval the
 * program did not plan is logged and left pending, which the oracle then
 * reports as a stuck session.
 */
export async function driveProgramApprovals(client: Client, flow: AgentSessionFlow, flowId: string, program: SessionProgram, signal?: AbortSignal): Promise<void> {
  const plannedById = new Map(programToolCalls(program).map((call) => [call.toolCallId, call]));
  while (signal?.aborted !== true) {
    try {
      const [pending] = await client.getAttributes(flowId, flow.pendingInterrupts);
      for (const interrupt of pending ?? []) {
        if (interrupt.kind !== "approval") continue;
        const approval = plannedById.get(interrupt.toolCallId)?.approval ?? null;
        if (approval === null) {
          console.error(`session program ${program.seed}: approval ${interrupt.interruptId} of ${interrupt.toolCallId} was not planned`);
          continue;
        }
        await client.invokeRPC(flow.resolveInterrupt, flowId, approval.approved
          ? { interruptId: interrupt.interruptId, approved: true }
          : { interruptId: interrupt.interruptId, approved: false, rejectionMessage: approval.rejectionMessage });
      }
    } catch (error) {
      if (StoreClosedError.isInstance(error)) return;
      // Lock conflicts and the faults of a FaultInjectingStore are expected; the next poll retries.
      const isExpected = FlowNotFoundError.isInstance(error) || RpcLockConflictError.isInstance(error) || injectedFaultOf(error) !== undefined;
      if (!isExpected) console.error(`session program ${program.seed} approvals:`, error);
    }
    await delay(10);
  }
}
