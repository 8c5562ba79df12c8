/** `execute_plan`: approves a plan revision; `AwaitUserMessage` starts its `executing` turn. */
import { describeValue, rpc } from "@perdure/engine";
import { planExecutionKey } from "../../contract/values/agent-plan.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { requireRunningSession } from "./require-running-session.ts";
import { inputObject } from "./rpc-input.ts";

/** Input of `execute_plan`. */
export interface ExecutePlanInput {
  revision: number;
}

function parseExecutePlan(raw: unknown): ExecutePlanInput {
  const { revision } = inputObject(raw, "execute_plan");
  if (typeof revision !== "number" || !Number.isSafeInteger(revision) || revision < 1) {
    throw new TypeError(`revision must be a positive integer, got ${describeValue(revision)}`);
  }
  return { revision };
}

/**
 * `true` only while the session waits for a user message, the plan has this
 * revision and is `draft` or `active`, no execution of it is pending, and
 * nothing is queued or pending. Records the approval in
 * `PendingPlanExecution` and publishes it to `PlanExecutions[<revision>]`.
 * Locks `PendingPlanExecution`, so a concurrent call may throw
 * `RpcLockConflictError`, which is safe to retry (`invokeRPC`'s
 * `lockConflictRetryMs`).
 */
export function createExecutePlanRpc(environment: SessionEnvironment) {
  const { persistence } = environment;
  return rpc<ExecutePlanInput, boolean>({
    name: "execute_plan",
    parseInput: parseExecutePlan,
    locks: [persistence.pendingPlanExecution],
    handler: async (context, input) => {
      requireRunningSession(context, "execute_plan");
      const state = await context.read(persistence.agentState);
      if (state === undefined || state.status !== "waiting_for_user_message" || state.activeTurnId !== null) return false;
      const plan = await context.read(persistence.agentPlan);
      if (plan === undefined || plan.revision !== input.revision || (plan.status !== "draft" && plan.status !== "active")) return false;
      if ((await context.read(persistence.pendingPlanExecution)) !== undefined) return false;
      if ((await context.listMessages(persistence.queuedUserMessages, { limit: 1 })).length > 0) return false;
      if (((await context.read(persistence.pendingInterrupts)) ?? []).length > 0) return false;
      const request = { revision: input.revision };
      await context.write(persistence.pendingPlanExecution, request);
      await context.publish(persistence.planExecutions.instance(planExecutionKey(input.revision)), request);
      return true;
    },
  });
}
