import { Client, Worker, type FlowCore } from "@perdure/engine";
import { createTemporarySqliteStore, pollUntil, type TemporarySqliteStore } from "@perdure/engine/testing";
import type { AgentSessionFlow } from "../create-agent-session-flow.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";

/** A temporary store with an in-process Worker and a Client, for session tests. */
export interface SessionHarness {
  temporary: TemporarySqliteStore;
  client: Client;
  worker: Worker;
  restartWorker(): Promise<void>;
  waitForState(flowId: string, predicate: (state: AgentState) => boolean, description: string): Promise<AgentState>;
  dispose(): Promise<void>;
}

export async function startSessionHarness(flows: readonly FlowCore[]): Promise<SessionHarness> {
  const temporary = createTemporarySqliteStore();
  const client = new Client({ store: temporary.store });
  const newWorker = async (): Promise<Worker> => {
    const worker = new Worker({ store: temporary.store, flows, livenessTimeoutMs: 1000, pollIntervalMs: 20, onError: () => undefined });
    await worker.start();
    return worker;
  };
  const harness: SessionHarness = {
    temporary,
    client,
    worker: await newWorker(),
    async restartWorker() {
      await harness.worker.close();
      harness.worker = await newWorker();
    },
    async waitForState(flowId, predicate, description) {
      const flow = flows[0] as AgentSessionFlow;
      return pollUntil(async () => {
        const [state] = await client.getAttributes(flowId, flow.agentState);
        return state !== undefined && predicate(state) ? state : undefined;
      }, { timeoutMs: 15_000, description });
    },
    async dispose() {
      await harness.worker.close();
      await temporary.dispose();
    },
  };
  return harness;
}

/** Waits until the session finished `turnCount` turns and waits for a message. */
export function waitForTurns(harness: SessionHarness, flowId: string, turnCount: number): Promise<AgentState> {
  return harness.waitForState(flowId, (state) => state.turnCount >= turnCount && state.activeTurnId === null, `${flowId} to finish ${turnCount} turn(s)`);
}
