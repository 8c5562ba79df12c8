/**
 * What the Stepwise integration tests share: an engine of its own (a real
 * SQLite file), a Worker in this process, a session client, and readers of
 * the Step history and the events.
 */
import type { TestContext } from "node:test";
import type { AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { AgentSessionTestClient } from "../../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../../testing/agent-test-environment.ts";
import { PrivateEngine } from "../../testing/private-engine.ts";
import type { StepHistoryRecord } from "../../testing/read-step-history.ts";
import type { AgentEvent } from "../../contract/values/agent-event.ts";

export interface StepwiseTestAgent {
  engine: PrivateEngine;
  environment: AgentTestEnvironment;
  sessions: AgentSessionTestClient;
}

/** An engine of its own, a Worker in this process running `flows`, and a session client for the first one. */
export async function startStepwiseTestAgent(t: TestContext, flows: readonly AgentSessionFlow[]): Promise<StepwiseTestAgent> {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows, workerOptions: { pollIntervalMs: 20 } });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  return { engine, environment, sessions: new AgentSessionTestClient(environment.client, flows[0] as AgentSessionFlow) };
}

/** The completed `execute` methods, in order. */
export function completedExecutes(history: readonly StepHistoryRecord[]): string[] {
  return history.filter((entry) => entry.method === "execute" && entry.status === "completed").map((entry) => entry.stepType);
}

export function payloadsOf(events: readonly AgentEvent[], type: AgentEvent["type"]): Record<string, unknown>[] {
  return events.filter((event) => event.type === type).map((event) => event.payload);
}
