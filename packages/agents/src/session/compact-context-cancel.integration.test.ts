/**
 * `cancel_turn` while `CompactContext` runs: the contract cancels the
 * compaction as it cancels a model call. On a private SQLite engine with a
 * Worker in this process, the summary call parks until the test lets it go;
 * the cancel aborts its signal, the turn ends cancelled without a model call
 * or a stored summary, an answer that arrives late is dropped, and the next
 * turn compacts again.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pollUntil } from "@perdure/engine/testing";
import type { ContextSummaryRequest, ContextSummaryResult } from "../contract/agent-framework-runner.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { readStepHistory } from "../testing/read-step-history.ts";
import { createAgentSessionFlow } from "./create-agent-session-flow.ts";
import { AgentStepType } from "./step-types.ts";
import { CompactingEchoRunner } from "./test-fixtures/message-storage-flows.ts";

/** The compacting echo runner whose first summary call waits until `releaseFirstSummary`, recording whether its signal was aborted. */
class ParkedSummaryRunner extends CompactingEchoRunner {
  readonly modelCallTurns: string[] = [];
  firstSummaryAborted = false;
  private release: () => void = () => undefined;
  private readonly released = new Promise<void>((resolve) => {
    this.release = resolve;
  });
  private reachedFirstSummary: (turnId: string) => void = () => undefined;
  readonly firstSummaryReached = new Promise<string>((resolve) => {
    this.reachedFirstSummary = resolve;
  });

  override async runModelStep(...parameters: Parameters<CompactingEchoRunner["runModelStep"]>): ReturnType<CompactingEchoRunner["runModelStep"]> {
    this.modelCallTurns.push(parameters[0].turnId);
    return super.runModelStep(...parameters);
  }

  override async summarizeContext(request: ContextSummaryRequest): Promise<ContextSummaryResult> {
    if (this.summaryCalls === 0) {
      this.reachedFirstSummary(request.turnId);
      await this.released;
      this.firstSummaryAborted = request.cancellationSignal.aborted;
    }
    return super.summarizeContext(request);
  }

  releaseFirstSummary(): void {
    this.release();
  }
}

void test("cancel_turn during CompactContext aborts the summary call, ends the turn cancelled without a model call or a summary, drops the late answer, and the next turn compacts", { timeout: 300_000 }, async (t) => {
  const engine = await PrivateEngine.start();
  const runner = new ParkedSummaryRunner();
  // 10 tokens a message: the first compaction comes once 85 messages are stored.
  const flow = createAgentSessionFlow(runner, "CancelCompaction", { compaction: { contextWindowTokens: 1000 } });
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow] });
  t.after(async () => {
    runner.releaseFirstSummary();
    await environment.close();
    await engine.stop();
  });
  const sessions = new AgentSessionTestClient(environment.client, flow);
  await sessions.startSession("c1", { initialMessage: "turn 1" });
  let turn = 1;
  const parked = runner.firstSummaryReached;
  for (;;) {
    const reached = await Promise.race([parked.then(() => "summary" as const), sessions.waitForTurnCount("c1", turn).then(() => "turn" as const)]);
    if (reached === "summary") break;
    assert.ok(turn < 40, "the session compacts within 40 turns");
    turn += 1;
    assert.equal(await sessions.sendUserMessage("c1", `turn ${turn}`), true);
  }
  const cancelledTurn = await parked;
  assert.equal(cancelledTurn, `turn-${turn}`);
  const [compacting] = await environment.client.getAttributes("c1", flow.agentState);
  assert.deepEqual([compacting?.status, compacting?.activeTurnId], ["compacting_context", cancelledTurn]);
  const messagesBefore = compacting?.messageCount ?? 0;

  assert.equal(await sessions.cancelTurn("c1", cancelledTurn), true);
  const ended = await sessions.waitForTurnCount("c1", turn);
  assert.equal(ended.status, "waiting_for_user_message");
  assert.equal(ended.lastTurnError, null);
  assert.ok(!runner.modelCallTurns.includes(cancelledTurn), "the cancelled turn made no model call");
  const [summaryAfterCancel] = await environment.client.getAttributes("c1", flow.contextSummary);
  assert.equal(summaryAfterCancel, undefined, "no summary was stored");

  // The parked call now answers; its execution was cancelled, so nothing it returns is kept.
  runner.releaseFirstSummary();
  await pollUntil(async () => (runner.summaryCalls === 1 ? true : undefined), { timeoutMs: 10_000, description: "the parked summary call to return" });
  assert.equal(runner.firstSummaryAborted, true, "cancel_turn aborted the summary call's signal");
  const events = await sessions.readEvents("c1");
  const ofTurn = events.filter((event) => event.turnId === cancelledTurn).map((event) => event.type);
  assert.ok(ofTurn.includes("compaction_started"));
  assert.ok(ofTurn.includes("turn_cancelled"));
  assert.ok(!ofTurn.includes("compaction_finished"), "the cancelled compaction never finished");
  const history = await readStepHistory(engine.address, "c1");
  const compactions = history.filter((entry) => entry.stepType === AgentStepType.CompactContext && entry.method === "execute");
  assert.deepEqual(compactions.map((entry) => entry.status), ["cancelled"]);
  assert.ok(history.some((entry) => entry.stepType === AgentStepType.FinishTurnCancellation && entry.status === "completed"));
  const [stillNoSummary] = await environment.client.getAttributes("c1", flow.contextSummary);
  assert.equal(stillNoSummary, undefined, "the late answer was dropped");

  // The next turn compacts again and completes.
  turn += 1;
  assert.equal(await sessions.sendUserMessage("c1", `turn ${turn}`), true);
  const after = await sessions.waitForTurnCount("c1", turn);
  assert.equal(after.lastTurnError, null);
  assert.ok(after.messageCount > messagesBefore);
  const [summary] = await environment.client.getAttributes("c1", flow.contextSummary);
  assert.deepEqual([summary?.generation, summary?.turnId], [1, `turn-${turn}`]);
  assert.equal(runner.summaryCalls, 2);
});
