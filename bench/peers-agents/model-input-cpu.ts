/**
 * The JavaScript of one `RunModel`'s model input, timed alone (issue 40):
 * a Snapshot of a session's message window as a claim reply gives it, then
 * what `buildTurnContext` and the end of the turn ask of it: the loaded
 * messages (`loadedStoredMessages`) and the tool call keys three times
 * (`loadedKeys`). No store, no model: CPU µs per model call, for comparing
 * two builds of the packages on a machine too busy for `cpu-per-turn.ts` to
 * resolve a change this size.
 *
 *   node bench/peers-agents/model-input-cpu.ts [window messages] [rounds]
 *
 * It imports the built packages (`dist/`) by path, as Snapshot and
 * AttemptContext are not exported; run `npx tsc -b` first.
 */
import { defineFlow, defineStep, deadEnd } from "@perdure/engine";
import { AttemptContext, type AttemptServices } from "../../packages/engine/dist/worker/attempt-context.js";
import { Snapshot } from "../../packages/engine/dist/worker/snapshot.js";
import { createAgentSessionPersistence } from "../../packages/agents/dist/session/persistence.js";
import { loadedStoredMessages } from "../../packages/agents/dist/session/messages/loaded-messages.js";
import { agentMessageToWire, messageSequenceKey } from "../../packages/agents/dist/contract/values/agent-message.js";

const messageCount = Number(process.argv[2] ?? "60");
const rounds = Number(process.argv[3] ?? "7");
const persistence = createAgentSessionPersistence({ eventStreamCapacityBytes: 1_000_000 });
const Only = defineStep("Only", { execute: () => deadEnd() });
const flow = defineFlow({ type: "ModelInputCpu", steps: [Only], persistence });

/** Stored texts of the bench turn's messages: user, assistant tool calls, tool results, the answer. */
const rows = Array.from({ length: messageCount }, (_, index) => {
  const sequence = index + 1;
  const text = `Order turn-${Math.floor(index / 6)} has shipped; I tagged it as checked.`;
  const message = { sequence, role: index % 6 === 0 ? "user" as const : "assistant" as const, text, turnId: `turn-${Math.floor(index / 6)}`, createdAt: new Date(0).toISOString(), frameworkItem: { content: [{ type: "text", text }] } };
  return { name: "AgentMessages", key: messageSequenceKey(sequence), value: JSON.stringify(agentMessageToWire(message)) };
});
const toolCallRows = ["call-1", "call-2"].map((id) => ({ name: "AgentToolCalls", key: id, value: JSON.stringify({ tool_call_id: id, status: "succeeded" }) }));

function services(): AttemptServices {
  return {
    flow, flowId: "f1", stepType: "Only", executionId: "e1", attempt: 1, deadline: new Date(Date.now() + 60_000), signal: new AbortController().signal,
    checkpoint: undefined, recoveryError: undefined, waitResult: undefined, maxValueBytes: 1_000_000, now: () => Date.now(),
    heartbeat: async () => undefined, writeStream: async () => undefined,
  };
}

/** One model call's reads, on a snapshot built from fresh strings (as each claim reply gives). */
function oneModelCall(): number {
  const fresh = JSON.parse(JSON.stringify([rows, toolCallRows])) as [typeof rows, typeof toolCallRows];
  const startedAt = process.cpuUsage();
  const snapshot = Snapshot.ofLoaded(flow, [], [{ kind: "range", name: "AgentMessages" }, { kind: "range", name: "AgentToolCalls" }], fresh);
  const context = new AttemptContext(snapshot, services());
  const messages = loadedStoredMessages(context, persistence);
  for (let call = 0; call < 3; call++) context.loadedKeys(persistence.agentToolCalls);
  if (messages.length !== messageCount) throw new Error(`read ${messages.length} messages of ${messageCount}`);
  const used = process.cpuUsage(startedAt);
  return used.user + used.system;
}

for (let warm = 0; warm < 2_000; warm++) oneModelCall();
const medians: number[] = [];
for (let round = 0; round < rounds; round++) {
  let total = 0;
  const calls = 2_000;
  for (let call = 0; call < calls; call++) total += oneModelCall();
  medians.push(total / calls);
}
medians.sort((left, right) => left - right);
console.log(`model input of ${messageCount} messages: ${medians[Math.floor(medians.length / 2)]!.toFixed(1)} µs CPU per model call (median of ${rounds} rounds of 2,000; min ${medians[0]!.toFixed(1)}, max ${medians.at(-1)!.toFixed(1)})`);
