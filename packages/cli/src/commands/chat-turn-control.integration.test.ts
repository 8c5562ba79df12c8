/**
 * `perdure chat` turn commands, typed while a turn runs, against a real
 * Worker on a temporary SQLite file: `/queue <text>` and `/queue`, `/steer
 * #<n>` into a turn whose tool still runs, `/delete #<n>`, and `/stop` of a
 * model call that would never answer.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { createStepwiseAgentSessionFlow, functionTool, ScriptedModelClient, type ModelRequest, type ScriptedModelReply } from "@perdure/agents/stepwise";
import { pollUntil } from "@perdure/agents/testing";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore } from "@perdure/engine/testing";
import { runChatCommand } from "./chat.ts";

/** Opened by the test: the slow lookup waits for it. */
let releaseLookup: () => void = () => undefined;
let lookupStarted = false;

function reply(request: ModelRequest): ScriptedModelReply | Promise<ScriptedModelReply> {
  const userText = ScriptedModelClient.userTexts(request).at(-1) ?? "";
  const results = ScriptedModelClient.toolResults(request);
  if (userText.includes("hang")) {
    // A model call that never answers until cancel_turn aborts it.
    return new Promise((_resolve, reject) => request.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }));
  }
  if (userText.includes("look up")) return results.length > 0 ? { text: `Found: ${results[0]?.output ?? ""}` } : { toolCalls: [{ name: "slow_lookup", arguments: {} }] };
  return { text: `You said: ${userText}` };
}

const slowLookup = functionTool({
  name: "slow_lookup",
  description: "A lookup that waits for the test.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
  effect: "read",
  execute: async () => {
    lookupStarted = true;
    await new Promise<void>((resolve) => { releaseLookup = resolve; });
    return "order 7 is shipped";
  },
});

void test("perdure chat steers a queued message into a running turn with /steer #1, deletes one with /delete #2, and stops a hanging model call with /stop", { timeout: 300_000 }, async (t) => {
  const temporary = createTemporarySqliteStore();
  const flow = createStepwiseAgentSessionFlow({ name: "chat-turns", instructions: "", model: new ScriptedModelClient(reply), tools: [slowLookup] }, "ChatTurnControlAgent");
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
  await worker.start();
  t.after(async () => {
    releaseLookup();
    await worker.close();
    await temporary.dispose();
  });
  const client = new Client({ store: temporary.store });
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = "";
  output.on("data", (chunk: Buffer) => { printed += chunk.toString(); });
  const printedSoFar = async (pattern: RegExp, description: string): Promise<void> => {
    await pollUntil(() => pattern.test(printed), { timeoutMs: 20_000, description: `${description} in:\n${printed}` });
  };
  const typed = (line: string): void => { input.write(`${line}\n`); };

  const chat = runChatCommand(client, flow, "t1", input, output);
  typed("look up order 7");
  await pollUntil(() => lookupStarted, { timeoutMs: 20_000, description: "the slow lookup to start" });
  typed("/queue where is order 8?");
  typed("/queue never mind");
  await printedSoFar(/\[queued: never mind\]/, "the second queued message");
  typed("/queue");
  await printedSoFar(/ {2}#1 where is order 8\?\n {2}#2 never mind\n/, "the queue listed");
  typed("/delete #2");
  await printedSoFar(/\[deleted: never mind\]/, "the deletion");
  typed("/steer #1");
  await printedSoFar(/\[sent into the turn: where is order 8\?\]/, "the steer");
  let snapshot = await client.invokeRPC(flow.getAgentSnapshot, "t1");
  assert.deepEqual([snapshot.queuedMessages, snapshot.steeredMessages.map((message) => message.text), snapshot.state?.activeTurnId], [[], ["where is order 8?"], "turn-1"]);
  typed("/delete #1");
  await printedSoFar(/\[no such queued message; \/queue lists them\]/, "a delete of nothing");

  // The started lookup runs to its end; then the steered message takes over in a new turn.
  releaseLookup();
  await printedSoFar(/\[turn steered: 1 message\(s\) take over in the next turn\]/, "the steered turn's end");
  await printedSoFar(/You said: where is order 8\?\nyou> $/, "the steered message's answer");
  snapshot = await client.invokeRPC(flow.getAgentSnapshot, "t1");
  assert.equal(snapshot.state?.turnCount, 2);
  assert.ok(!snapshot.messages.some((message) => message.text.includes("never mind")), "the deleted message reached the session");
  assert.ok(!printed.includes("Found:"), "the steered turn's model answered the lookup");

  typed("please hang");
  await pollUntil(async () => (await client.getAttributes("t1", flow.agentState))[0]?.status === "running_model", { timeoutMs: 20_000, description: "the hanging model call" });
  typed("/stop");
  await printedSoFar(/\[stopping the turn\]/, "the stop");
  await printedSoFar(/\[turn stopped\]\n {2}\nyou> $/, "the stopped turn's end");
  snapshot = await client.invokeRPC(flow.getAgentSnapshot, "t1");
  assert.deepEqual([snapshot.state?.turnCount, snapshot.state?.activeTurnId], [3, null]);

  typed("/quit");
  input.end();
  await chat;
});
