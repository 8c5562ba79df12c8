/**
 * The session of the agents' boundary-kill test, imported by the test (to
 * start it and read it back) and by the Worker processes the loop kills (to
 * run it). One turn: the model asks for a read tool (`lookup_order`), an
 * approved single-attempt write (`send_refund`, non_idempotent_write) and a
 * failing tool (`check_warehouse`, throws `ToolExecutionError`), then
 * answers with their statuses. Every real tool run is recorded in an
 * InvocationLog outside the store; the approval is given by a driver inside
 * the Worker process that reconciles from the store, so a replacement
 * approves what a killed process did not.
 */
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { FlowNotFoundError, RpcLockConflictError, StoreClosedError, type Client } from "@perdure/engine";
import type { DeferredToolExecution } from "../../contract/agent-framework-runner.ts";
import { ToolExecutionError } from "../../contract/tool-execution-error.ts";
import { createAgentSessionFlow, type AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import type { ToolEffect } from "../../contract/values/tool-effect.ts";
import { InvocationLog } from "../invocation-log.ts";
import { ScriptedAgentRunner, type ScriptInput, type ScriptReply, type ScriptedTool } from "../scripted-agent-runner.ts";

/** The one session of a run (each run has an engine of its own). */
export const boundaryKillSessionId = "session-1";

/** The Worker ID of every process of a run: a replacement fails over the killed process's claims at once. */
export const boundaryKillSessionWorkerId = "boundary-kill-session-worker";

/** The folder of the run's InvocationLog; the test passes it to every Worker process. */
export const boundaryKillSessionDirectoryEnvironmentVariable = "PERDURE_BOUNDARY_KILL_SESSION_DIRECTORY";

/** The effect the Worker processes give `send_refund` (see {@link BoundaryKillSessionFlowOptions}). */
export const boundaryKillSessionRefundEffectEnvironmentVariable = "PERDURE_BOUNDARY_KILL_SESSION_REFUND_EFFECT";

/** The user's message that starts the turn. */
export const boundaryKillSessionMessage = "Order 7 arrived broken: refund it and check the warehouse.";

/** The text of the model's first response, which asks for the three tools. */
export const boundaryKillSessionToolRequestText = "Let me sort this out.";

/** What the failing tool throws. */
export const warehouseOfflineError = "warehouse W9 is offline";

/** Details of a tool's InvocationLog entry. */
export interface SessionToolRunDetails {
  toolCallId: string;
  idempotencyKey: string;
  attempt: number;
}

/** The InvocationLog of the run in `directory`. */
export function boundaryKillSessionLog(directory: string): InvocationLog {
  return new InvocationLog(join(directory, "tool-runs.log"));
}

function recordToolRun(toolName: string, call: DeferredToolExecution): void {
  const directory = process.env[boundaryKillSessionDirectoryEnvironmentVariable];
  if (directory === undefined || directory === "") throw new Error(`set ${boundaryKillSessionDirectoryEnvironmentVariable} to the run's folder`);
  const details: SessionToolRunDetails = { toolCallId: call.toolCall.toolCallId, idempotencyKey: call.idempotencyKey, attempt: call.attempt };
  boundaryKillSessionLog(directory).record(toolName, details);
}

/** Options of {@link createBoundaryKillSessionFlow}. */
export interface BoundaryKillSessionFlowOptions {
  /**
   * The effect `send_refund` declares. Anything but `non_idempotent_write`
   * (say `idempotent_write`, which is retried) is a mislabelled write that
   * may run twice; the test uses it to show the loop catches that.
   * @default "non_idempotent_write"
   */
  refundEffect?: ToolEffect;
}

function createTools(options: BoundaryKillSessionFlowOptions): Record<string, ScriptedTool> {
  return {
    lookup_order: {
      effect: "read",
      execute: async (args, call) => {
        recordToolRun("lookup_order", call);
        return `order ${String(args.order_id)}: delivered damaged, paid 12 EUR`;
      },
    },
    // Approval by default (and always asked for): a non_idempotent_write runs once, in CallSingleAttemptTool.
    send_refund: {
      effect: options.refundEffect ?? "non_idempotent_write",
      requiresApproval: true,
      execute: async (args, call) => {
        recordToolRun("send_refund", call);
        return `refunded ${String(args.amount)} EUR under ${call.idempotencyKey}`;
      },
    },
    check_warehouse: {
      effect: "read",
      execute: async (_args, call) => {
        recordToolRun("check_warehouse", call);
        throw new ToolExecutionError(warehouseOfflineError);
      },
    },
  };
}

/** Asks for the three tools at once, then reports each call's status. */
function script(input: ScriptInput): ScriptReply {
  if (input.modelCall === 1) {
    return {
      text: boundaryKillSessionToolRequestText,
      toolCalls: [
        { name: "lookup_order", arguments: { order_id: "7" } },
        { name: "send_refund", arguments: { order_id: "7", amount: 12 } },
        { name: "check_warehouse", arguments: { warehouse: "W9" } },
      ],
    };
  }
  return { text: input.previousResults.map((call) => `${call.toolName}: ${call.status}`).join("; ") };
}

/** The session Flow of the agents' boundary-kill test, with a scripted runner and the three tools. */
export function createBoundaryKillSessionFlow(options: BoundaryKillSessionFlowOptions = {}): AgentSessionFlow {
  return createAgentSessionFlow(new ScriptedAgentRunner(script, createTools(options)), "BoundaryKillSession");
}

/** The session Flow as the test means it: `send_refund` is a non_idempotent_write. */
export const boundaryKillSessionFlow = createBoundaryKillSessionFlow();

/**
 * Approves every pending approval of the session, as a person in a UI would:
 * polls the store and calls `resolve_interrupt` once nothing else of the
 * session is queued or running, retrying while a Step holds its lock. Runs in the Worker process, so a kill inside that RPC's commit
 * is one of the loop's boundaries and a replacement approves again.
 */
export async function driveApprovals(client: Client, flow: AgentSessionFlow, flowId: string): Promise<void> {
  for (;;) {
    try {
      const [pending] = await client.getAttributes(flowId, flow.pendingInterrupts);
      // Only once every other Step of the session waits too, so every run meets the approval at the
      // same point and the loop's n-th boundary is the same one in every run.
      const settled = pending !== undefined && pending.length > 0 && (await client.describe(flowId)).executions.every((execution) => execution.status === "waiting");
      for (const interrupt of settled ? pending : []) {
        if (interrupt.kind === "approval") await client.invokeRPC(flow.resolveInterrupt, flowId, { interruptId: interrupt.interruptId, approved: true });
      }
    } catch (error) {
      if (StoreClosedError.isInstance(error)) return;
      if (!FlowNotFoundError.isInstance(error) && !RpcLockConflictError.isInstance(error)) console.error("approval driver:", error);
    }
    await delay(10);
  }
}
