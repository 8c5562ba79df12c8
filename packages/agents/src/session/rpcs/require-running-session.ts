import { FlowNotRunningError, type RpcContext } from "@perdure/engine";

/**
 * A stopped, completed or failed session takes no new messages or decisions:
 * nothing would ever consume them. Reads still work.
 */
export function requireRunningSession(context: RpcContext, rpcName: string): void {
  if (context.flowStatus !== "running") {
    throw new FlowNotRunningError(`session ${context.flowId} is ${context.flowStatus}, so ${rpcName} was refused and nothing was stored`);
  }
}
