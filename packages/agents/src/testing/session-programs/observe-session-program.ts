/** Reads what a session program's run left: the snapshot, every event, and the tool runs counted outside the store. */
import type { Client } from "@perdure/engine";
import type { AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import type { AgentEvent } from "../../contract/values/agent-event.ts";
import { assertAgentSessionInvariants } from "../agent-session-invariants.ts";
import { InvocationLog } from "../invocation-log.ts";
import type { SessionProgramObservation } from "./check-session-program.ts";

/** Every `AgentEvents` message of the session, oldest first. */
async function readAllEvents(client: Client, flow: AgentSessionFlow, flowId: string): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  let after: string | undefined;
  for (;;) {
    const read = await client.readStream(flowId, flow.agentEvents, { limit: 1000, ...(after === undefined ? {} : { after }) });
    if (read.lost) throw new Error(`events of ${flowId} were trimmed before they were read; the oracle needs all of them`);
    events.push(...read.messages.map((message) => message.value));
    if (read.messages.length === 0) return events;
    after = read.nextToken;
  }
}

/**
 * Checks `assertAgentSessionInvariants` (which throws on a broken one) and
 * returns what the oracle compares: the snapshot, the events and the runs
 * in the InvocationLog at `toolLogPath`.
 */
export async function observeSessionProgram(client: Client, flow: AgentSessionFlow, flowId: string, toolLogPath: string): Promise<SessionProgramObservation> {
  const snapshot = await assertAgentSessionInvariants(client, flow, flowId);
  return { snapshot, events: await readAllEvents(client, flow, flowId), toolRuns: new InvocationLog(toolLogPath).entries(), flowId };
}

/** True once the session ran every turn of a program of `turnCount` turns and only its wait for the next message is left. */
export async function isSessionProgramAtRest(client: Client, flow: AgentSessionFlow, flowId: string, turnCount: number): Promise<boolean> {
  const [state] = await client.getAttributes(flowId, flow.agentState);
  if (state === undefined || state.turnCount < turnCount || state.activeTurnId !== null) return false;
  const { executions } = await client.describe(flowId);
  return executions.length === 1 && executions[0]?.stepType === "AwaitUserMessage" && executions[0].status === "waiting";
}

/** The session's state in a few lines, for the report of a run that got stuck. */
export async function describeSessionProgramState(client: Client, flow: AgentSessionFlow, flowId: string): Promise<string> {
  const [state, pending] = await client.getAttributes(flowId, flow.agentState, flow.pendingInterrupts);
  const { executions } = await client.describe(flowId);
  const history = await client.getStepHistory(flowId);
  return JSON.stringify({
    state,
    pending: pending?.map((interrupt) => interrupt.interruptId),
    executions: executions.map((execution) => `${execution.stepType} ${execution.status}`),
    history: history.slice(-40).map((entry) => `${entry.stepType}.${entry.method} ${entry.status}#${entry.attempt}${entry.error === null ? "" : ` ${entry.error}`}`),
  });
}
