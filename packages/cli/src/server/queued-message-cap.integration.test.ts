/**
 * The per-session cap on user messages that wait for a turn, through the dev
 * server in this process on a real SQLite file: while a turn runs, the
 * session takes messages until its count or byte limit (defaults), then
 * `POST /api/chat` and the steer route answer 409 with the reason, and the
 * inspection the page polls carries previews of the waiting texts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createAgentSessionFlow } from "@perdure/agents";
import { ScriptedModelClient, StepwiseAgentRunner } from "@perdure/agents/stepwise";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore, pollUntil } from "@perdure/engine/testing";
import { createDevApp } from "./create-dev-app.ts";

const token = "queue-test-token";

void test("a session refuses the 21st waiting message and the bytes past 1 MiB with 409, and the inspection carries previews", { timeout: 300_000 }, async (t) => {
  let releaseModel: () => void = () => undefined;
  const modelReleased = new Promise<void>((resolveRelease) => { releaseModel = resolveRelease; });
  const model = new ScriptedModelClient(async () => {
    await modelReleased;
    return { text: "done" };
  });
  const flow = createAgentSessionFlow(new StepwiseAgentRunner({ name: "queue", instructions: "Answer.", model }), "QueueAgent");
  const temporary = createTemporarySqliteStore();
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
  await worker.start();
  t.after(async () => {
    releaseModel();
    await worker.close();
    await temporary.dispose();
  });
  const client = new Client({ store: temporary.store });
  const app = createDevApp({ client, flows: new Map([[flow.flowType, flow]]), access: { token, port: 4998 }, allowedHosts: ["localhost:4998"] });
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> => {
    const response = await app.request(`http://localhost:4998${path}`, {
      method,
      headers: { host: "localhost:4998", authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json", origin: "http://localhost:4998" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (response.headers.get("content-type")?.startsWith("text/event-stream") === true) {
      await response.body?.cancel();
      return { status: response.status, text: "" };
    }
    return { status: response.status, text: await response.text() };
  };
  const chat = (sessionId: string, text: string) => call("POST", "/api/chat", { id: sessionId, messages: [{ id: "m", role: "user", parts: [{ type: "text", text }] }] });
  const startBlockedTurn = async (sessionId: string): Promise<void> => {
    assert.equal((await call("POST", "/api/sessions", { sessionId, agent: "QueueAgent" })).status, 201);
    assert.equal(await client.invokeRPC(flow.sendUserMessage, sessionId, { text: "start" }), true);
    await pollUntil(async () => {
      const [state] = await client.getAttributes(sessionId, flow.agentState);
      return state?.activeTurnId === "turn-1" && (await client.getStepHistory(sessionId, { limit: 100 })).length > 0 ? true : undefined;
    }, { timeoutMs: 20_000, description: `${sessionId}'s first turn running` });
  };

  // By count: 20 messages wait behind the running turn, the 21st is refused, steered text too.
  await startBlockedTurn("by-count");
  for (let index = 1; index <= 20; index += 1) assert.equal((await chat("by-count", `message ${index}`)).status, 200, `message ${index}`);
  const overCount = await chat("by-count", "message 21");
  assert.equal(overCount.status, 409, overCount.text);
  assert.match(overCount.text, /session by-count already has 20 user messages waiting for a turn, the most maxQueuedUserMessages allows \(20\); wait for the running turn, or delete or steer a queued message/);
  const overCountSteer = await call("POST", "/api/sessions/by-count/steer", { text: "steer me" });
  assert.equal(overCountSteer.status, 409, overCountSteer.text);
  assert.equal((await client.invokeRPC(flow.getAgentSnapshot, "by-count")).queuedMessages?.length, 20);

  // By bytes: four 250 KiB messages fit in 1 MiB, a fifth does not.
  await startBlockedTurn("by-bytes");
  const large = (letter: string) => letter.repeat(250 * 1024);
  for (const letter of ["a", "b", "c", "d"]) assert.equal((await chat("by-bytes", large(letter))).status, 200, letter);
  const overBytes = await chat("by-bytes", large("e"));
  assert.equal(overBytes.status, 409, overBytes.text.slice(0, 300));
  assert.match(overBytes.text, /session by-bytes has 1024000 bytes of user messages waiting for a turn; this message's 256000 bytes would pass maxQueuedUserMessageBytes \(1048576\)/);
  assert.equal((await chat("by-bytes", "a short one still fits")).status, 200);

  // The inspection the page polls carries a preview of each waiting text, with its size.
  const inspection = await call("GET", "/api/sessions/by-bytes/inspect");
  assert.equal(inspection.status, 200);
  assert.ok(inspection.text.length < 64 * 1024, `the inspection is ${inspection.text.length} characters`);
  const queued = (JSON.parse(inspection.text) as { snapshot: { queued_messages: { text: string; text_bytes: number }[] } }).snapshot.queued_messages;
  assert.deepEqual(queued.map((message) => message.text_bytes), [256000, 256000, 256000, 256000, 22]);
  assert.equal(queued[0]?.text, `${"a".repeat(199)}…`);
  assert.equal(queued[4]?.text, "a short one still fits");
});
