/**
 * One timed turn of the long-session benchmark: `send_user_message`, the
 * model's final answer, and the committed end of the turn, with the wall
 * time and this process's CPU time in between.
 */
import type { AgentSessionFlow } from "@perdure/agents";
import type { Client } from "@perdure/engine";
import type { FinalAnswerSignals } from "../scripted-runner.ts";
import { confirmTurnEnded } from "../session-bench.ts";

/** What a timed turn needs: the session Flow, a Client on its store and the signals its model sends. */
export interface TimedTurnContext {
  client: Client;
  flow: AgentSessionFlow;
  signals: FinalAnswerSignals;
}

/** The cost of one turn. */
export interface TurnTime {
  ms: number;
  /** User + system CPU of this process, where the Worker, the store and the Client all run. */
  cpuMs: number;
}

/** Sends turn `turnNumber`'s message to `sessionId` and waits until the turn's end is committed. */
export async function runTimedTurn(context: TimedTurnContext, sessionId: string, turnNumber: number): Promise<TurnTime> {
  const { client, flow, signals } = context;
  const finalAnswer = signals.expect(sessionId);
  const cpuAtStart = process.cpuUsage();
  const startedAt = performance.now();
  if (!(await client.invokeRPC(flow.sendUserMessage, sessionId, { text: `Where is order ${turnNumber}?` }))) throw new Error(`session ${sessionId} refused message ${turnNumber}`);
  await finalAnswer;
  await confirmTurnEnded({ client, flow }, sessionId, turnNumber);
  const ms = performance.now() - startedAt;
  const cpu = process.cpuUsage(cpuAtStart);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}
