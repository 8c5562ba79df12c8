/**
 * `POST /sessions/:id/fork` on a real SQLite file with a Worker: a fork that
 * edits and resends a message belongs to its caller and names its source in
 * the inspector; another principal cannot fork the session, and bad input
 * gets a 4xx that names it.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { pollUntil } from "@perdure/engine/testing";
import { startHttpHarness, type HttpHarness } from "../test-fixtures/http-harness.ts";

async function turnsOf(harness: HttpHarness, sessionId: string): Promise<number> {
  const [state] = await harness.client.getAttributes(sessionId, harness.flow.agentState);
  return state?.activeTurnId === null ? state.turnCount : -1;
}

async function errorOf(response: Response, status: number): Promise<string> {
  const text = await response.text();
  assert.equal(response.status, status, text);
  return (JSON.parse(text) as { error: string }).error;
}

it("forks a session over HTTP: edit and resend in a new session of the caller, lineage in the inspector, the source unchanged", { timeout: 300_000 }, async (t) => {
  const harness = await startHttpHarness("plain");
  t.after(() => harness.close());
  assert.equal((await harness.call("POST", "/api/sessions", { user: "alice", body: { sessionId: "source" } })).status, 201);
  for (const [turn, text] of ["hello there", "and once more"].entries()) {
    await harness.client.invokeRPC(harness.flow.sendUserMessage, "source", { text });
    await pollUntil(async () => (await turnsOf(harness, "source")) === turn + 1, { timeoutMs: 20_000, description: `source turn ${turn + 1}` });
  }
  const sourceBefore = await harness.client.getAttributes("source", harness.flow.agentState, harness.flow.agentUsage);

  const forked = await harness.call("POST", "/api/sessions/source/fork", { user: "alice", body: { throughTurn: 1, initialMessage: "and once again, edited", sessionId: "edited" } });
  assert.equal(forked.status, 201, await forked.clone().text());
  const body = await forked.json() as { sessionId: string; created: boolean; lineage: { source_session_id: string; through_turn: number } };
  assert.equal(body.sessionId, "edited");
  assert.deepEqual([body.lineage.source_session_id, body.lineage.through_turn], ["source", 1]);
  await pollUntil(async () => (await turnsOf(harness, "edited")) === 2, { timeoutMs: 20_000, description: "the edited fork's turn" });
  const messages = await (await harness.call("GET", "/api/sessions/edited/snapshot", { user: "alice" })).json() as { messages: { role: string; text: string }[] };
  assert.deepEqual(messages.messages.filter((message) => message.role === "user").map((message) => message.text), ["hello there", "and once again, edited"]);
  const inspection = await (await harness.call("GET", "/api/sessions/edited/inspect", { user: "alice" })).json() as { lineage: { sourceSessionId: string; throughTurn: number } | null };
  assert.deepEqual([inspection.lineage?.sourceSessionId, inspection.lineage?.throughTurn], ["source", 1]);
  const listed = await (await harness.call("GET", "/api/sessions", { user: "alice" })).json() as { sessions: { sessionId: string }[] };
  assert.ok(listed.sessions.some((session) => session.sessionId === "edited"), "the fork is the caller's");
  const sourceInspection = await (await harness.call("GET", "/api/sessions/source/inspect", { user: "alice" })).json() as { lineage: unknown; forks: { sessions: { sessionId: string; throughTurn: number }[]; complete: boolean } };
  assert.equal(sourceInspection.lineage, null);
  assert.deepEqual(sourceInspection.forks.sessions.map((fork) => [fork.sessionId, fork.throughTurn]), [["edited", 1]], "the source's inspection lists its fork");
  assert.equal(sourceInspection.forks.complete, true);
  assert.deepEqual(await harness.client.getAttributes("source", harness.flow.agentState, harness.flow.agentUsage), sourceBefore, "the source is unchanged");

  // Asked again, the same fork; another principal sees no such session; bad values are named.
  const again = await harness.call("POST", "/api/sessions/source/fork", { user: "alice", body: { throughTurn: 1, initialMessage: "and once again, edited", sessionId: "edited" } });
  assert.deepEqual([again.status, ((await again.json()) as { created: boolean }).created], [200, false]);
  assert.match(await errorOf(await harness.call("POST", "/api/sessions/source/fork", { user: "bob", body: { throughTurn: 1 } }), 404), /session source not found/);
  assert.match(await errorOf(await harness.call("POST", "/api/sessions/source/fork", { user: "alice", body: { throughTurn: 7 } }), 400), /throughTurn 7 is invalid for session source: use an integer from 0 to 2/);
  assert.match(await errorOf(await harness.call("POST", "/api/sessions/source/fork", { user: "alice", body: { throughTurn: "1" } }), 400), /throughTurn "1" is invalid/);
  assert.match(await errorOf(await harness.call("POST", "/api/sessions/source/fork", { user: "alice", body: { throughTurn: 0, sessionId: "source" } }), 409), /session source already exists; choose another ID for the fork/);
  assert.match(await errorOf(await harness.call("POST", "/api/sessions/source/fork", { user: "alice", body: { throughTurn: 0, sessionId: "bad id" } }), 400), /session ID "bad id" is invalid/);
});
