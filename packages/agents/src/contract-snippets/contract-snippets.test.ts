/**
 * The contract's TypeScript examples for the sections built so far, run
 * against Perdure with only their import paths changed (the files beside
 * this one; `tsc -b` compiles them). Sections still to come (built-in
 * tools, MCP, compaction and message chunks) add their examples here as
 * they land.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createStepwiseAgentSessionFlow } from "../stepwise/create-stepwise-agent-session-flow.ts";
import { functionTool } from "../stepwise/function-tool.ts";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { model } from "./demo-model.ts";
import { getEvents, getSnapshot } from "./event-sse-routes.ts";
import { authorizedSessions, setSnippetEnvironment } from "./snippet-environment.ts";
import { getChat, getChatStream, postChat } from "./use-chat-routes.ts";

const lookupOrder = functionTool<{ order_id: string }>({
  name: "lookup_order",
  description: "Look up an order by its ID.",
  parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
  effect: "read",
  execute: async ({ order_id }) => `order ${order_id} shipped`,
});

const flow = createStepwiseAgentSessionFlow({ name: "demo", instructions: "Answer briefly.", model, tools: [lookupOrder] }, "SnippetAgent");

let engine: PrivateEngine;
let environment: AgentTestEnvironment;

before(async () => {
  engine = await PrivateEngine.start();
  environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow] });
  setSnippetEnvironment({ client: environment.client, flow });
});

after(async () => {
  await environment.close();
  await engine.stop();
});

const post = (body: unknown): Request => new Request("http://localhost/api/chat", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("the contract's examples, run against Perdure", () => {
  it("Demo model without a key: the scripted demo model answers a session", async () => {
    const sessions = new AgentSessionTestClient(environment.client, flow);
    await sessions.start("demo-1");
    await sessions.sendUserMessage("demo-1", "hello there");
    await sessions.waitForTurnCount("demo-1", 1);
    const snapshot = await environment.client.invokeRPC(flow.getAgentSnapshot, "demo-1");
    assert.equal(snapshot.messages.at(-1)?.text, "Demo reply: hello there");
  });

  it("useChat: the three routes send a message, stream its turn, reload the chat and reconnect", async () => {
    await environment.client.startFlow(flow, "chat-1", {});
    const streamed = await postChat(post({ id: "chat-1", messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "what is new?" }] }] }));
    assert.equal(streamed.status, 200);
    assert.equal(streamed.headers.get("x-vercel-ai-ui-message-stream"), "v1");
    const body = await streamed.text();
    const deltas = [...body.matchAll(/"type":"text-delta","id":"[^"]+","delta":"([^"]*)"/g)].map((match) => match[1]).join("");
    assert.equal(deltas, "Demo reply: what is new?");
    assert.match(body, /"type":"finish","finishReason":"stop"/);
    const chat = (await (await getChat(new Request("http://localhost/api/chat/chat-1"), "chat-1")).json()) as { messages: { role: string; parts: { type: string; text?: string }[] }[]; resumeToken: string | null };
    assert.deepEqual(chat.messages.map((message) => message.role), ["user", "assistant"]);
    assert.equal(chat.messages[1]?.parts.find((part) => part.type === "text")?.text, "Demo reply: what is new?");
    assert.equal(chat.resumeToken, null);
    const reconnect = await getChatStream(new Request("http://localhost/api/chat/chat-1/stream"), "chat-1");
    assert.equal(reconnect.status, 204, "no turn is active to follow");
    assert.deepEqual(authorizedSessions.slice(-3), ["chat-1", "chat-1", "chat-1"]);
  });

  it("Plain Server-Sent Events: the snapshot route, then the event stream from its token", async () => {
    await environment.client.startFlow(flow, "sse-1", {});
    const snapshot = (await (await getSnapshot(new Request("http://localhost/sessions/sse-1/snapshot"), "sse-1")).json()) as { resume_token: string };
    assert.equal(typeof snapshot.resume_token, "string");
    const sessions = new AgentSessionTestClient(environment.client, flow);
    await sessions.sendUserMessage("sse-1", "stream me");
    await sessions.waitForTurnCount("sse-1", 1);
    const controller = new AbortController();
    const events = await getEvents(new Request(`http://localhost/sessions/sse-1/events?resumeToken=${encodeURIComponent(snapshot.resume_token)}`, { signal: controller.signal }), "sse-1");
    assert.equal(events.status, 200);
    assert.match(events.headers.get("content-type") ?? "", /^text\/event-stream/);
    const reader = events.body?.getReader();
    assert.ok(reader !== undefined);
    let text = "";
    while (!text.includes("turn_completed")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    await reader.cancel().catch(() => undefined);
    assert.match(text, /"type":"turn_started"/);
    assert.match(text, /"type":"turn_completed"/);
    assert.match(text, /^id: /m);
  });
});
