/**
 * The dev server's model picker and summary routes, in this process on a
 * real SQLite file: a session starts with settings, `POST
 * /api/sessions/:id/settings` replaces them, the agent's `modelChoices`
 * reach `/api/agents` and the inspection, each turn uses the model its
 * settings name, and the inspection shows the context summary.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore, pollUntil } from "@perdure/engine/testing";
import { contextSummaryInstructions, createStepwiseAgentSessionFlow, ScriptedModelClient, type ModelClient } from "@perdure/agents/stepwise";
import { createDevApp } from "./create-dev-app.ts";

const token = "settings-test-token";

void test("a session picks its model through session settings, and the inspection shows the context summary", { timeout: 300_000 }, async (t) => {
  const filler = "The customer wants to know where the parcel is and when the refund arrives. ";
  const reply = (name: string) => new ScriptedModelClient((request) => (request.instructions === contextSummaryInstructions
    ? { text: `${name} summary` }
    : { text: `${name}: ${filler}` }), { provider: name });
  const models: Record<string, ScriptedModelClient> = { "demo-small": reply("demo-small"), "demo-large": reply("demo-large") };
  const flow = createStepwiseAgentSessionFlow({
    name: "picker", instructions: "Answer.", model: models["demo-small"] as ModelClient,
    modelChoices: Object.keys(models),
    resolveModel: (settings) => models[String(settings.model)] ?? (models["demo-small"] as ModelClient),
    compaction: { contextWindowTokens: 600 },
  }, "PickerAgent");
  const temporary = createTemporarySqliteStore();
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
  await worker.start();
  t.after(async () => {
    await worker.close();
    await temporary.dispose();
  });
  const client = new Client({ store: temporary.store });
  const app = createDevApp({ client, flows: new Map([[flow.flowType, flow]]), access: { token, port: 4999 }, allowedHosts: ["localhost:4999"] });
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    const response = await app.request(`http://localhost:4999${path}`, {
      method,
      headers: { host: "localhost:4999", authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json", origin: "http://localhost:4999" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const send = async (text: string, turns: number): Promise<void> => {
    assert.equal(await client.invokeRPC(flow.sendUserMessage, "p1", { text }), true);
    await pollUntil(async () => {
      const [state] = await client.getAttributes("p1", flow.agentState);
      return state !== undefined && state.turnCount >= turns && state.activeTurnId === null ? state : undefined;
    }, { timeoutMs: 15_000, description: `turn ${turns}` });
  };

  const agents = await call("GET", "/api/agents");
  assert.deepEqual((agents.json.features as Record<string, { modelChoices: string[] }>).PickerAgent?.modelChoices, ["demo-small", "demo-large"]);

  const refused = await call("POST", "/api/sessions", { sessionId: "p0", sessionSettings: ["demo-large"] });
  assert.equal(refused.status, 400);
  assert.match(String(refused.json.error), /session settings must be a JSON object/);

  // A model outside the agent's choices is refused before the session exists, inherited names included.
  for (const model of ["constructor", "toString", "__proto__", "demo-huge", 5, null]) {
    const outside = await call("POST", "/api/sessions", { sessionId: "p-outside", sessionSettings: { model } });
    assert.equal(outside.status, 400, `${String(model)}: ${JSON.stringify(outside.json)}`);
    assert.match(String(outside.json.error), /^model .* is not one of agent PickerAgent's choices: demo-small, demo-large$/);
  }
  assert.equal(await client.describe("p-outside").then(() => true, () => false), false);

  const created = await call("POST", "/api/sessions", { sessionId: "p1", sessionSettings: { model: "demo-large" } });
  assert.equal(created.status, 201);
  await send(`first ${filler}`, 1);
  assert.deepEqual(models["demo-large"]?.requests.map((request) => request.turnId), ["turn-1"]);

  const updated = await call("POST", "/api/sessions/p1/settings", { sessionSettings: { model: "demo-small" } });
  assert.deepEqual([updated.status, updated.json], [200, { updated: true }]);
  const badUpdate = await call("POST", "/api/sessions/p1/settings", {});
  assert.equal(badUpdate.status, 400);
  const outsideUpdate = await call("POST", "/api/sessions/p1/settings", { sessionSettings: { model: "constructor" } });
  assert.deepEqual([outsideUpdate.status, outsideUpdate.json.error], [400, "model \"constructor\" is not one of agent PickerAgent's choices: demo-small, demo-large"]);
  const unchanged = await call("GET", "/api/sessions/p1/inspect");
  assert.deepEqual((unchanged.json.snapshot as { session_settings: unknown }).session_settings, { model: "demo-small" });
  let turns = 1;
  for (; turns < 10; ) {
    turns += 1;
    await send(`message ${turns} ${filler}`, turns);
    const [summary] = await client.getAttributes("p1", flow.contextSummary);
    if (summary !== undefined) break;
  }
  assert.ok(models["demo-small"]?.requests.some((request) => request.turnId === "turn-2"), "turn-2 used the newly picked model");
  assert.equal(models["demo-large"]?.requests.length, 1, "the old model got no call after the update");

  const inspection = await call("GET", "/api/sessions/p1/inspect");
  const snapshot = inspection.json.snapshot as { session_settings: unknown; context_summary: { summary: string; generation: number; last_sequence: number } | null };
  assert.deepEqual(snapshot.session_settings, { model: "demo-small" });
  assert.equal(snapshot.context_summary?.summary, "demo-small summary");
  assert.equal(snapshot.context_summary?.generation, 1);
  assert.ok((snapshot.context_summary?.last_sequence ?? 0) >= 1);
  assert.deepEqual((inspection.json.features as { modelChoices: string[] }).modelChoices, ["demo-small", "demo-large"]);
});
