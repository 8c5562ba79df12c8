/**
 * `TurnReplySequence` and `TurnSessionSettings` that name an earlier turn,
 * as a turn a 0.1.0 Worker started leaves them, are ignored: the turn counts
 * its replies from its own stored messages and its model calls run without
 * settings. On a private SQLite engine, a parked model call gives the test
 * the moment to put an earlier turn's values in place through a second
 * connection; the call's retry then reads them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import type { AgentFrameworkRunner, AgentTurnContext, AgentTurnOutcome, DeferredToolOutcome } from "../contract/agent-framework-runner.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import type { FrameworkMessage } from "../contract/values/agent-message.ts";
import { emptyAgentUsage } from "../contract/values/agent-usage.ts";
import type { SessionSettings } from "../contract/values/session-settings.ts";
import { createAgentSessionFlow } from "./create-agent-session-flow.ts";

/** Answers every turn with three messages; turn-2's first attempt parks until released, then fails so the call is retried. */
class ParkingReplyRunner implements AgentFrameworkRunner<DeferredToolOutcome> {
  readonly calls: { turnId: string; attempt: number; settings: SessionSettings }[] = [];
  private release: () => void = () => undefined;
  private readonly released = new Promise<void>((resolve) => {
    this.release = resolve;
  });
  private reached: () => void = () => undefined;
  readonly parked = new Promise<void>((resolve) => {
    this.reached = resolve;
  });

  buildUserMessage(text: string): FrameworkMessage {
    return { role: "user", text, frameworkItem: null };
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    this.calls.push({ turnId: turn.turnId, attempt: turn.attempt, settings: turn.sessionSettings ?? {} });
    if (turn.turnId === "turn-2" && turn.attempt === 1) {
      this.reached();
      await this.released;
      throw new Error("the first attempt of turn-2 fails once, so its retry reads committed state again");
    }
    const replies = ["one", "two", "three"].map((text) => ({ role: "assistant" as const, text: `${turn.turnId} ${text}`, frameworkItem: null }));
    return { kind: "turn_completed", newMessages: replies, usage: emptyAgentUsage() };
  }

  async executeDeferredToolCall(): Promise<DeferredToolOutcome> {
    throw new Error("no tools");
  }

  releaseParkedCall(): void {
    this.release();
  }
}

/** Writes a plain Attribute's stored JSON through a second connection to the store's file. */
function overwriteAttribute(engine: PrivateEngine, flowId: string, name: string, value: unknown): void {
  const database = new DatabaseSync(join(engine.directory, "engine.db"));
  try {
    const changed = database.prepare("UPDATE attributes SET value = ? WHERE flow_id = ? AND name = ? AND key = ''").run(JSON.stringify(value), flowId, name);
    assert.equal(changed.changes, 1, `${name} of ${flowId} is stored`);
  } finally {
    database.close();
  }
}

void test("a TurnReplySequence and TurnSessionSettings that name an earlier turn are ignored: the turn counts its own replies and runs without settings", { timeout: 300_000 }, async (t) => {
  const engine = await PrivateEngine.start();
  const runner = new ParkingReplyRunner();
  const flow = createAgentSessionFlow(runner, "StaleTurnCopies");
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow] });
  t.after(async () => {
    runner.releaseParkedCall();
    await environment.close();
    await engine.stop();
  });
  const sessions = new AgentSessionTestClient(environment.client, flow);
  await sessions.startSession("s1", { initialMessage: "first", sessionSettings: { model: "fresh" } });
  await sessions.waitForTurnCount("s1", 1);
  assert.equal(await sessions.sendUserMessage("s1", "second"), true);
  await runner.parked;
  assert.deepEqual(runner.calls.map((call) => [call.turnId, call.attempt, call.settings]), [["turn-1", 1, { model: "fresh" }], ["turn-2", 1, { model: "fresh" }]]);

  // What a turn started by a Worker that writes neither copy would find: turn-1's values.
  overwriteAttribute(engine, "s1", "TurnReplySequence", { turn_id: "turn-1", sequence: 2 });
  overwriteAttribute(engine, "s1", "TurnSessionSettings", { turn_id: "turn-1", settings: { model: "stale" } });
  runner.releaseParkedCall();
  const state = await sessions.waitForTurnCount("s1", 2, { timeoutMs: 30_000 });
  assert.equal(state.lastTurnError, null);
  assert.equal(state.messageCount, 8);

  assert.deepEqual(runner.calls.at(-1), { turnId: "turn-2", attempt: 2, settings: {} }, "the retry ran without the earlier turn's settings");
  const completed = (await sessions.readEvents("s1")).filter((event) => event.type === "turn_completed").map((event) => [event.turnId, event.payload]);
  // A stale sequence 2 would have counted 7 messages for turn-2.
  assert.deepEqual(completed, [["turn-1", { message_count: 3 }], ["turn-2", { message_count: 3 }]]);
});
