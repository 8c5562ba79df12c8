/**
 * `agentTool` on a real SQLite engine with a Worker in this process: a
 * writer agent calls a researcher sub-agent twice in one response; each call
 * starts one child session (its ID derived from the call), waits without a
 * Worker until the child's turn ends (one poll per call, woken by the
 * child, not a poll loop), and returns the child's answer. A child whose
 * turn fails fails the parent's call with the child's reason; a sub-agent
 * deeper than maxDepth is refused; a call over maxSubAgentsPerTurn fails
 * without a child; cancelling the parent's turn cancels the child's.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { Client, TerminalError } from "@perdure/engine";
import { pollUntil } from "@perdure/engine/testing";
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { readStepHistory } from "../testing/read-step-history.ts";
import { decideApproval } from "../http/approval-decision.ts";
import { inspectSession } from "../http/session-inspection.ts";
import { agentTool, childSessionId } from "./agent-tool.ts";
import { createStepwiseAgentSessionFlow } from "./create-stepwise-agent-session-flow.ts";
import { ScriptedModelClient } from "./scripted-model-client.ts";
import { functionTool } from "./function-tool.ts";
import { completedExecutes } from "./test-fixtures/stepwise-test-agent.ts";

interface Setup {
  engine: PrivateEngine;
  client: Client;
  sessions: AgentSessionTestClient;
  flows: AgentSessionFlow[];
}

async function start(t: TestContext, build: (client: Client) => AgentSessionFlow[]): Promise<Setup> {
  const engine = await PrivateEngine.start();
  const client = new Client({ store: engine.openStore() });
  const flows = build(client);
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows, workerOptions: { pollIntervalMs: 20 } });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  return { engine, client, flows, sessions: new AgentSessionTestClient(client, flows[0] as AgentSessionFlow) };
}

let releaseSlowResearch: () => void = () => undefined;

const researcherModel = () => new ScriptedModelClient(async (request) => {
  const task = ScriptedModelClient.userTexts(request).at(-1) ?? "";
  if (task.includes("unanswerable")) throw new TerminalError("no source covers this");
  if (task.includes("slow")) await new Promise<void>((resolve) => { releaseSlowResearch = resolve; });
  return { text: `findings on ${task}` };
});

/** The writer calls `research` once per line of the user's message, all in one response. */
const writerModel = () => new ScriptedModelClient((request) => {
  const results = ScriptedModelClient.toolResults(request);
  if (results.length > 0) return { text: `Report: ${results.map((result) => result.output).join(" | ")}` };
  const topics = (ScriptedModelClient.userTexts(request).at(-1) ?? "").split("\n");
  return { toolCalls: topics.map((topic, index) => ({ name: "research", id: `r${index + 1}`, arguments: { task: topic } })) };
});

function buildFlows(client: Client, maxDepth?: number): AgentSessionFlow[] {
  const researcher = createStepwiseAgentSessionFlow({ name: "researcher", instructions: "Research.", model: researcherModel() }, "Researcher");
  const research = agentTool({ flow: researcher, name: "research", description: "Researches one topic and reports findings.", client, ...(maxDepth === undefined ? {} : { maxDepth }) });
  const writer = createStepwiseAgentSessionFlow({ name: "writer", instructions: "Write.", model: writerModel(), tools: [research] }, "Writer");
  return [writer, researcher];
}

test("two sub-agent calls start one child session each, wait without polling, and return the children's answers", async (t) => {
  const { engine, client, sessions, flows } = await start(t, (created) => buildFlows(created));
  const researcher = flows[1] as AgentSessionFlow;
  await sessions.start("writer-1", { initialMessage: "tides\nwinds" });
  await sessions.waitForTurnCount("writer-1", 1, { timeoutMs: 30_000 });
  const snapshot = await sessions.getAgentSnapshot("writer-1");
  assert.equal(snapshot.messages.at(-1)?.text, "Report: findings on tides | findings on winds");
  for (const [callId, topic] of [["r1", "tides"], ["r2", "winds"]] as const) {
    const childId = childSessionId("writer-1", "research", `writer-1/turn-1/${callId}`);
    const [state, link] = await client.getAttributes(childId, researcher.agentState, researcher.parentSession);
    assert.equal(state?.turnCount, 1, `${childId} ran one turn`);
    assert.deepEqual(link, { sessionId: "writer-1", toolCallId: callId, depth: 1 });
    const child = await client.invokeRPC(researcher.getAgentSnapshot, childId, undefined);
    assert.deepEqual(child.messages.map((message) => message.text), [topic, `findings on ${topic}`]);
  }
  // The inspector lists the children and shows each child's parent.
  const inspection = await inspectSession(client, sessions.flow, "writer-1", flows);
  assert.deepEqual(inspection.childSessions?.map((child) => child.agent), ["Researcher", "Researcher"]);
  assert.deepEqual(inspection.childSessions?.map((child) => child.sessionId).sort(), ["r1", "r2"].map((callId) => childSessionId("writer-1", "research", `writer-1/turn-1/${callId}`)).sort());
  const childInspection = await inspectSession(client, researcher, inspection.childSessions?.[0]?.sessionId ?? "", flows);
  assert.equal(childInspection.parentSession?.sessionId, "writer-1");
  assert.deepEqual(childInspection.childSessions, []);
  // The children's model calls roll up into the parent's usage: two of its own, one per child.
  assert.equal(snapshot.usage.requests, 4);
  // One poll per call: the child's turn end woke the parent; nothing polled in a loop.
  const executes = completedExecutes(await readStepHistory(engine.address, "writer-1"));
  assert.equal(executes.filter((step) => step === "PollToolTask").length, 2, executes.join(", "));
});

test("a child whose turn fails fails the parent's call with the child's reason", async (t) => {
  const { sessions } = await start(t, (created) => buildFlows(created));
  await sessions.start("writer-2", { initialMessage: "unanswerable riddle" });
  await sessions.waitForTurnCount("writer-2", 1, { timeoutMs: 60_000 });
  const events = await sessions.readEvents("writer-2");
  const finished = events.filter((event) => event.type === "tool_call_finished").map((event) => event.payload["status"]);
  assert.deepEqual(finished, ["failed"]);
  const answer = (await sessions.getAgentSnapshot("writer-2")).messages.at(-1)?.text ?? "";
  assert.match(answer, /^Report: .*sub-agent research \(session writer-2\.research-[0-9a-f]{20}\) failed: .*no source covers this/);
});

test("a sub-agent deeper than maxDepth is refused with an error naming the limit", async (t) => {
  const { sessions } = await start(t, (client) => {
    // Delegators that each hand the task to the next, with maxDepth 1: the second hand-off is refused.
    const delegatingModel = () => new ScriptedModelClient((request) => {
      const results = ScriptedModelClient.toolResults(request);
      if (results.length > 0) return { text: `Report: ${results.map((result) => result.output).join(" | ")}` };
      return { toolCalls: [{ name: "delegate", id: "d1", arguments: { task: ScriptedModelClient.userTexts(request).at(-1) ?? "" } }] };
    });
    const last = createStepwiseAgentSessionFlow({ name: "last", instructions: "Answer.", model: researcherModel() }, "LastDelegate");
    const middle = createStepwiseAgentSessionFlow({ name: "middle", instructions: "Delegate.", model: delegatingModel(), tools: [agentTool({ flow: last, name: "delegate", description: "Delegates the task.", client, maxDepth: 1 })] }, "MiddleDelegate");
    const top = createStepwiseAgentSessionFlow({ name: "top", instructions: "Delegate.", model: delegatingModel(), tools: [agentTool({ flow: middle, name: "delegate", description: "Delegates the task.", client, maxDepth: 1 })] }, "TopDelegate");
    return [top, middle, last];
  });
  await sessions.start("top", { initialMessage: "plan a trip" });
  await sessions.waitForTurnCount("top", 1, { timeoutMs: 60_000 });
  assert.match((await sessions.getAgentSnapshot("top")).messages.at(-1)?.text ?? "", /^Report: Report: .*agentTool delegate: a sub-agent at depth 2 is over maxDepth 1/);
});

test("maxSubAgentsPerTurn counts a turn's sub-agent calls before any runs: the call over it fails naming the limit and starts no child", async (t) => {
  const { sessions, client, flows } = await start(t, (created) => {
    const researcher = createStepwiseAgentSessionFlow({ name: "researcher", instructions: "Research.", model: researcherModel() }, "FanOutResearcher");
    // One call, then two in parallel in one response: with the limit at 2 the third is refused.
    const fanOutModel = new ScriptedModelClient((request) => {
      const results = ScriptedModelClient.toolResults(request);
      if (results.length === 0) return { toolCalls: [{ name: "research", id: "a", arguments: { task: "tides" } }] };
      if (results.length === 1) return { toolCalls: [{ name: "research", id: "b", arguments: { task: "winds" } }, { name: "research", id: "c", arguments: { task: "waves" } }] };
      return { text: `Report: ${results.map((result) => result.output).join(" | ")}` };
    });
    const research = agentTool({ flow: researcher, name: "research", description: "Researches one topic.", client: created });
    const writer = createStepwiseAgentSessionFlow({ name: "writer", instructions: "Write.", model: fanOutModel, tools: [research], maxSubAgentsPerTurn: 2 }, "FanOutWriter");
    return [writer, researcher];
  });
  await sessions.start("writer-5", { initialMessage: "three topics" });
  await sessions.waitForTurnCount("writer-5", 1, { timeoutMs: 30_000 });
  const finished = (await sessions.readEvents("writer-5")).filter((event) => event.type === "tool_call_finished").map((event) => `${String(event.payload["tool_call_id"])}:${String(event.payload["status"])}`);
  assert.deepEqual(finished.sort(), ["a:succeeded", "b:succeeded", "c:failed"]);
  assert.equal(
    (await sessions.getAgentSnapshot("writer-5")).messages.at(-1)?.text,
    "Report: findings on tides | findings on winds | sub-agent call refused: this turn has made 2 sub-agent calls, the limit maxSubAgentsPerTurn (2), so research did not run. Finish without more sub-agents in this turn, or raise maxSubAgentsPerTurn in the agent's options.",
  );
  const inspection = await inspectSession(client, sessions.flow, "writer-5", flows);
  assert.equal(inspection.childSessions?.length, 2, "the refused call started no child");
  assert.throws(() => createStepwiseAgentSessionFlow({ name: "writer", instructions: "Write.", model: researcherModel(), maxSubAgentsPerTurn: 0 }, "NoSubAgents"), /maxSubAgentsPerTurn 0 is invalid/);
});

test("cancel_turn on the parent cancels the child's running turn", async (t) => {
  const { client, sessions } = await start(t, (created) => buildFlows(created));
  await sessions.start("writer-3", { initialMessage: "slow seas" });
  const childId = childSessionId("writer-3", "research", "writer-3/turn-1/r1");
  await pollUntil(async () => {
    try {
      const [state] = await client.getAttributes(childId, sessions.flow.agentState);
      return state?.activeTurnId === "turn-1" ? true : undefined;
    } catch {
      return undefined;
    }
  }, { timeoutMs: 30_000, description: "the child's turn to run" });
  assert.equal(await client.invokeRPC(sessions.flow.cancelTurn, "writer-3", {}), true);
  const childEvents = await pollUntil(async () => {
    const read = await client.readStream(childId, sessions.flow.agentEvents, { limit: 1000 });
    return read.messages.some((message) => message.value.type === "turn_cancelled") ? read.messages : undefined;
  }, { timeoutMs: 30_000, description: "the child's turn to be cancelled" });
  assert.ok(childEvents.length > 0);
  releaseSlowResearch();
});

const publishes: string[] = [];

test("a child's approval appears in the parent's session as a question naming the child, and the answer there reaches the child", async (t) => {
  const { client, sessions, flows } = await start(t, (created) => {
    const publish = functionTool<{ topic: string }>({
      name: "publish", description: "Publishes findings.", effect: "non_idempotent_write", requiresApproval: true,
      parameters: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
      execute: async ({ topic }) => {
        publishes.push(topic);
        return `done ${topic}`;
      },
    });
    const publisherModel = new ScriptedModelClient((request) => {
      const topic = ScriptedModelClient.userTexts(request).at(-1) ?? "";
      const results = ScriptedModelClient.toolResults(request);
      if (results.length > 0) return { text: `published ${topic}: ${results.map((result) => result.output).join(" | ")}` };
      return { toolCalls: [{ name: "publish", id: "p1", arguments: { topic } }] };
    });
    const publisher = createStepwiseAgentSessionFlow({ name: "publisher", instructions: "Publish.", model: publisherModel, tools: [publish] }, "Publisher");
    const writer = createStepwiseAgentSessionFlow({ name: "writer", instructions: "Write.", model: writerModel(), tools: [agentTool({ flow: publisher, name: "research", description: "Publishes one topic.", client: created })] }, "PublishingWriter");
    return [writer, publisher];
  });
  await sessions.start("writer-4", { initialMessage: "tides" });
  const childId = childSessionId("writer-4", "research", "writer-4/turn-1/r1");
  const [interrupt] = await sessions.waitForPendingInterrupts("writer-4", 1, { timeoutMs: 30_000 });
  assert.equal(interrupt?.kind, "question");
  assert.equal(interrupt?.question, `Sub-agent research (session ${childId}) asks for approval to run publish with {"topic":"tides"}.`);
  assert.deepEqual(interrupt?.choices, ["Approve", "Reject"]);
  assert.deepEqual(publishes, [], "nothing ran before the approval");
  const [childPending] = await client.getAttributes(childId, (flows[1] as AgentSessionFlow).pendingInterrupts);
  assert.equal(childPending?.[0]?.kind, "approval", "the child waits for its own approval");
  // The parent's approval route refuses it by name and points at the question route.
  await assert.rejects(
    decideApproval(client, sessions.flow, "writer-4", interrupt?.interruptId ?? "", { approved: true }),
    { status: 409, message: `interrupt ${interrupt?.interruptId ?? ""} is a question, not an approval: answer it with POST …/sessions/writer-4/questions/${interrupt?.interruptId ?? ""}` },
  );
  assert.equal(await sessions.answerQuestion("writer-4", { interruptId: interrupt?.interruptId ?? "", answer: "Approve" }), true);
  await sessions.waitForTurnCount("writer-4", 1, { timeoutMs: 30_000 });
  assert.equal((await sessions.getAgentSnapshot("writer-4")).messages.at(-1)?.text, "Report: published tides: done tides");
  assert.deepEqual(publishes, ["tides"]);
});
