/**
 * The session HTTP API as a plain Fetch handler and mounted in Hono, on a
 * real SQLite file with a Worker: a turn with an approval over useChat's
 * route and over REST, two principals who never see each other's sessions,
 * and bad input answered with a 4xx that names it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pollUntil } from "@perdure/engine/testing";
import { agentHttpRoutes } from "./agent-http-routes.ts";
import { startHttpHarness, refunds, type HttpHarness, type Mount, type User } from "./test-fixtures/http-harness.ts";

function chatBody(sessionId: string, text: string): unknown {
  return { id: sessionId, messages: [{ id: "m1", role: "user", parts: [{ type: "text", text }] }] };
}

async function createSession(harness: HttpHarness, user: User, sessionId: string): Promise<void> {
  const created = await harness.call("POST", "/api/sessions", { user, body: { sessionId } });
  assert.equal(created.status, 201, await created.clone().text());
  assert.deepEqual(await created.json(), { sessionId, agent: "HttpSupportAgent" });
}

/** Sends `text` through useChat's route and reads the whole stream. */
async function chat(harness: HttpHarness, user: User, sessionId: string, text: string): Promise<string> {
  const response = await harness.call("POST", "/api/chat", { user, body: chatBody(sessionId, text) });
  assert.equal(response.status, 200, await response.clone().text());
  return response.text();
}

async function pendingInterrupts(harness: HttpHarness, sessionId: string): Promise<{ interruptId: string; kind: string }[]> {
  const [pending] = await harness.client.getAttributes(sessionId, harness.flow.pendingInterrupts);
  return (pending ?? []).map(({ interruptId, kind }) => ({ interruptId, kind }));
}

interface Snapshot {
  state: { status: string };
  tool_calls: { tool_name: string; status: string }[];
  messages: { framework_item?: unknown }[];
}

async function snapshotOf(harness: HttpHarness, user: User, sessionId: string): Promise<Snapshot> {
  const response = await harness.call("GET", `/api/sessions/${sessionId}/snapshot`, { user });
  assert.equal(response.status, 200);
  return response.json() as Promise<Snapshot>;
}

async function errorOf(response: Response, status: number): Promise<string> {
  const text = await response.text();
  assert.equal(response.status, status, text);
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
  return (JSON.parse(text) as { error: string }).error;
}

for (const mount of ["plain", "hono"] as const satisfies readonly Mount[]) {
  describe(`the session HTTP API mounted ${mount === "plain" ? "as a plain Fetch handler" : "in a Hono app"}`, () => {
    it("runs a turn with an approval decided over REST: the tool runs once and the snapshot shows it", { timeout: 300_000 }, async (t) => {
      const harness = await startHttpHarness(mount);
      t.after(() => harness.close());
      await createSession(harness, "alice", `rest-${mount}`);
      const order = mount === "plain" ? "4001" : "5001";
      const stream = await chat(harness, "alice", `rest-${mount}`, `please refund order ${order}`);
      assert.match(stream, /"type":"tool-approval-request"/);
      const [approval] = await pendingInterrupts(harness, `rest-${mount}`);
      assert.equal(approval?.kind, "approval");
      const decided = await harness.call("POST", `/api/sessions/rest-${mount}/approvals/${approval.interruptId}`, { user: "alice", body: { approved: true } });
      assert.deepEqual([decided.status, await decided.json()], [200, { decided: true, approved: true }]);
      await pollUntil(async () => (await snapshotOf(harness, "alice", `rest-${mount}`)).state.status === "waiting_for_user_message", { timeoutMs: 20_000, description: "the approved refund's turn to end" });
      assert.equal(refunds.filter((refunded) => refunded === order).length, 1);
      assert.match(JSON.stringify((await snapshotOf(harness, "alice", `rest-${mount}`)).messages), new RegExp(`refund_order: refunded ${order}`));
      const again = await harness.call("POST", `/api/sessions/rest-${mount}/approvals/${approval.interruptId}`, { user: "alice", body: { approved: false } });
      assert.match(await errorOf(again, 409), new RegExp(`approval ${approval.interruptId} was decided already: its refund_order call finished in turn-1`));
      const snapshot = await snapshotOf(harness, "alice", `rest-${mount}`);
      assert.ok(snapshot.messages.every((message) => !("framework_item" in message)), "the snapshot keeps framework items to the session's Steps");
    });

    it("runs a turn with an approval decided over useChat's route, and resumes the stream", { timeout: 300_000 }, async (t) => {
      const harness = await startHttpHarness(mount);
      t.after(() => harness.close());
      await createSession(harness, "alice", `chat-${mount}`);
      await chat(harness, "alice", `chat-${mount}`, "please refund order 4002");
      const [approval] = await pendingInterrupts(harness, `chat-${mount}`);
      assert.ok(approval !== undefined);
      const toolCallId = approval.interruptId.replace(/-approval$/, "");
      const decision = { id: `chat-${mount}`, messages: [{ id: "turn-1-assistant", role: "assistant", parts: [{ type: "dynamic-tool", toolName: "refund_order", toolCallId, state: "approval-responded", input: { order_id: "4002" }, approval: { id: approval.interruptId, approved: true } }] }] };
      const response = await harness.call("POST", "/api/chat", { user: "alice", body: decision });
      assert.equal(response.status, 200);
      assert.match(await response.text(), /"type":"tool-output-available","toolCallId":"[^"]+","output":"refunded 4002"/);
      const messages = await harness.call("GET", `/api/sessions/chat-${mount}/messages`, { user: "alice" });
      assert.match(JSON.stringify(await messages.json()), /refunded 4002/);
      const resumed = await harness.call("GET", `/api/chat/chat-${mount}/stream`, { user: "alice" });
      assert.equal(resumed.status, 204, "no turn is active, so there is nothing to resume");
    });

    it("serves only the caller's sessions: every session route answers another principal 404 like a missing session, and changes nothing", { timeout: 300_000 }, async (t) => {
      const harness = await startHttpHarness(mount);
      t.after(() => harness.close());
      await createSession(harness, "alice", "alices");
      await chat(harness, "alice", "alices", "please refund order 4003");
      const [approval] = await pendingInterrupts(harness, "alices");
      assert.ok(approval !== undefined);
      const before = JSON.stringify(await snapshotOf(harness, "alice", "alices"));
      const bodies: Record<string, unknown> = {
        decideApproval: { approved: true }, answerQuestion: { answer: "S" }, executePlan: { revision: 1 }, steerTurn: { text: "now" },
        deleteQueuedMessage: { messageId: "1" }, cancelTurn: {}, updateSessionSettings: { sessionSettings: { model: "x" } }, stopSession: {},
      };
      let checked = 0;
      for (const route of agentHttpRoutes.filter((candidate) => candidate.path.includes(":id"))) {
        for (const sessionId of ["alices", "nobody"]) {
          const path = `/api${route.path.replace(":id", sessionId).replace(":interruptId", approval.interruptId)}`;
          const response = await harness.call(route.method, path, { user: "bob", ...(route.method === "POST" ? { body: bodies[route.action] ?? {} } : {}) });
          assert.equal(await errorOf(response, 404), `session ${sessionId} not found`, `${route.action} as bob on ${sessionId}`);
        }
        checked += 1;
      }
      assert.equal(checked, agentHttpRoutes.filter((candidate) => candidate.path.includes(":id")).length);
      for (const sessionId of ["alices", "nobody"]) {
        const sent = await harness.call("POST", "/api/chat", { user: "bob", body: chatBody(sessionId, "refund order 9999 to me") });
        assert.equal(await errorOf(sent, 404), `session ${sessionId} not found`);
      }
      assert.equal(JSON.stringify(await snapshotOf(harness, "alice", "alices")), before, "bob's calls changed nothing");
      assert.deepEqual(await pendingInterrupts(harness, "alices"), [approval]);
      assert.equal((await harness.client.describe("alices")).status, "running");
      const bobsList = await harness.call("GET", "/api/sessions", { user: "bob" });
      assert.deepEqual(await bobsList.json(), { sessions: [] });
      await createSession(harness, "bob", "bobs");
      const alicesList = (await (await harness.call("GET", "/api/sessions", { user: "alice" })).json()) as { sessions: { sessionId: string; pendingApprovals: number }[] };
      assert.deepEqual(alicesList.sessions.map(({ sessionId, pendingApprovals }) => ({ sessionId, pendingApprovals })), [{ sessionId: "alices", pendingApprovals: 1 }]);
      const anonymous = await harness.call("GET", "/api/sessions");
      assert.match(await errorOf(anonymous, 401), /unknown caller/);
    });

    it("answers bad input with a 4xx that names it, and applies nothing", { timeout: 300_000 }, async (t) => {
      const harness = await startHttpHarness(mount);
      t.after(() => harness.close());
      await createSession(harness, "alice", "bad-input");
      await chat(harness, "alice", "bad-input", "which size?");
      const [question] = await pendingInterrupts(harness, "bad-input");
      assert.equal(question?.kind, "question");
      const decision = (id: unknown) => ({ id: "bad-input", messages: [{ id, role: "assistant", parts: [{ type: "data-agent-question", id: question.interruptId, data: { interruptId: question.interruptId, response: { answer: "S" } } }] }] });
      const cases: { name: string; method: string; path: string; body?: unknown; status: number; error: RegExp }[] = [
        { name: "an assistant message whose ID is not the turn's", method: "POST", path: "/api/chat", body: decision("msg-7Hk2"), status: 400, error: /the last message's id "msg-7Hk2" is invalid: .*turn-<n>-assistant/ },
        { name: "an assistant message without an ID", method: "POST", path: "/api/chat", body: decision(undefined), status: 400, error: /the last message's id undefined is invalid/ },
        { name: "an approval of a question", method: "POST", path: `/api/sessions/bad-input/approvals/${question.interruptId}`, body: { approved: true }, status: 409, error: new RegExp(`interrupt ${question.interruptId} is a question, not an approval`) },
        { name: "an approval that is not the session's", method: "POST", path: "/api/sessions/bad-input/approvals/turn-9-call-1-approval", body: { approved: true }, status: 404, error: /approval turn-9-call-1-approval is not one of session bad-input's/ },
        { name: "an approval decision that is not a boolean", method: "POST", path: "/api/sessions/bad-input/approvals/x", body: { approved: "yes" }, status: 400, error: /approved "yes" is invalid/ },
        { name: "a rejection reason that is not text", method: "POST", path: "/api/sessions/bad-input/approvals/x", body: { approved: false, reason: 7 }, status: 400, error: /reason 7 is invalid/ },
        { name: "a session ID that is not one", method: "GET", path: "/api/sessions/..%2Fetc/snapshot", status: 400, error: /session ID "..\/etc" is invalid/ },
        { name: "a malformed percent-encoding", method: "GET", path: "/api/sessions/%E0%A4%A/snapshot", status: 400, error: /malformed percent-encoding/ },
        { name: "an unknown route", method: "GET", path: "/api/nothing-here", status: 404, error: /no route GET \/api\/nothing-here/ },
        // Hono answers paths outside the mount itself.
        ...(mount === "plain" ? [{ name: "a path outside the base path", method: "GET", path: "/sessions", status: 404, error: /no route GET \/sessions/ }] : []),
        { name: "a wrong method", method: "DELETE", path: "/api/sessions/bad-input", body: {}, status: 404, error: /no route DELETE \/api\/sessions\/bad-input/ },
        { name: "an unknown agent", method: "POST", path: "/api/sessions", body: { agent: "Nobody" }, status: 400, error: /agent "Nobody" is not one of HttpSupportAgent/ },
        { name: "a body that is not JSON", method: "POST", path: "/api/sessions", body: "{", status: 400, error: /not valid JSON/ },
        { name: "an existing session ID", method: "POST", path: "/api/sessions", body: { sessionId: "bad-input" }, status: 409, error: /session bad-input already exists/ },
      ];
      for (const testCase of cases) {
        const response = await harness.call(testCase.method, testCase.path, { user: "alice", ...(testCase.body === undefined ? {} : { body: testCase.body }) });
        assert.match(await errorOf(response, testCase.status), testCase.error, testCase.name);
      }
      assert.deepEqual(await pendingInterrupts(harness, "bad-input"), [question], "the question still waits");
      const form = await harness.call("POST", "/api/sessions", { user: "alice", body: "sessionId=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
      assert.match(await errorOf(form, 415), /content type "application\/x-www-form-urlencoded" is not accepted/);
      const crossSite = await harness.call("POST", "/api/sessions", { user: "alice", body: {}, headers: { origin: "http://evil.test" } });
      assert.match(await errorOf(crossSite, 403), /origin "http:\/\/evil.test" may not change sessions here/);
    });
  });
}
