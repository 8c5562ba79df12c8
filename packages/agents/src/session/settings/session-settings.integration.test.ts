/**
 * Session settings end to end on a private SQLite engine with a Worker in
 * this process: the start input's settings, `update_session_settings`, the
 * turn's copy, snapshots, the size limits, and Stepwise's `resolveModel` and
 * `InstructionContext.sessionSettings`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pollUntil } from "@perdure/engine/testing";
import { createStepwiseAgentSessionFlow } from "../../stepwise/create-stepwise-agent-session-flow.ts";
import { functionTool } from "../../stepwise/function-tool.ts";
import type { InstructionContext } from "../../stepwise/agent-definition.ts";
import type { ModelRequest } from "../../stepwise/model-client.ts";
import { ScriptedModelClient } from "../../stepwise/scripted-model-client.ts";
import { startStepwiseTestAgent } from "../../stepwise/test-fixtures/stepwise-test-agent.ts";
import { AgentSessionTestClient } from "../../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../../testing/agent-test-environment.ts";
import { PrivateEngine } from "../../testing/private-engine.ts";
import { FileGate } from "../../testing/file-gate.ts";
import {
  invalidStartSessionSettingsReason,
  MAX_SESSION_SETTINGS_BYTES,
  SESSION_SETTINGS_SIZE_TOLERANCE_BYTES,
  sessionSettingsSize,
  validateSessionSettings,
} from "./session-settings-limits.ts";

/** Settings whose compact JSON is exactly `bytes` long: `{"pad":"xxx…"}`. */
function settingsOfSize(bytes: number): Record<string, unknown> {
  return { pad: "x".repeat(bytes - '{"pad":""}'.length) };
}

function lastUserText(request: ModelRequest): string {
  return ScriptedModelClient.userTexts(request).at(-1) ?? "";
}

/** Two scripted models, a tool, and an agent that picks the model from `settings.model`. */
function buildPickingAgent(gate?: () => FileGate) {
  const instructionContexts: InstructionContext[] = [];
  const reply = (name: string) => new ScriptedModelClient(async (request) => {
    if (lastUserText(request).startsWith("look") && ScriptedModelClient.toolResults(request).length === 0) {
      await gate?.().waitUntilOpen({ signal: request.signal });
      return { toolCalls: [{ name: "lookup", arguments: {}, id: `lookup-${request.turnId}` }] };
    }
    return { text: `${name} answers ${lastUserText(request)}` };
  }, { provider: name });
  const models = { small: reply("small"), large: reply("large") };
  const lookup = functionTool({ name: "lookup", description: "Looks up.", parameters: { type: "object", properties: {} }, effect: "read", execute: async () => "found" });
  const flow = createStepwiseAgentSessionFlow({
    name: "picker",
    instructions: (context) => {
      instructionContexts.push(context);
      return "Answer.";
    },
    model: models.small,
    tools: [lookup],
    resolveModel: (settings) => (settings.model === "large" ? models.large : models.small),
  }, "SettingsPicker");
  return { flow, models, instructionContexts };
}

void test("validateSessionSettings and sessionSettingsSize measure the compact UTF-8 JSON against MAX_SESSION_SETTINGS_BYTES", () => {
  assert.equal(MAX_SESSION_SETTINGS_BYTES, 16_384);
  assert.equal(SESSION_SETTINGS_SIZE_TOLERANCE_BYTES, 1_024);
  assert.equal(sessionSettingsSize({ model: "gpt-5" }), 17);
  assert.equal(sessionSettingsSize({ city: "Zürich" }), 18, "ü is two UTF-8 bytes");
  validateSessionSettings({ model: "gpt-5", nested: { list: [1, "two", null, true] } });
  validateSessionSettings(settingsOfSize(MAX_SESSION_SETTINGS_BYTES));
  assert.throws(() => validateSessionSettings(settingsOfSize(MAX_SESSION_SETTINGS_BYTES + 1)), (error: unknown) =>
    error instanceof TypeError && error.message.includes("16385 bytes") && error.message.includes("MAX_SESSION_SETTINGS_BYTES"));
  assert.throws(() => validateSessionSettings(null), /must be a JSON object, got null/);
  assert.throws(() => validateSessionSettings(["gpt-5"]), TypeError);
  assert.throws(() => validateSessionSettings({ temperature: Number.NaN }), /sessionSettings\.temperature is NaN/);
  assert.throws(() => validateSessionSettings({ since: new Date(0) }), /sessionSettings\.since .*not a plain JSON object/);
});

void test("the start settings reach every model call of a turn through resolveModel and the instructions function; an update applies from the next turn", { timeout: 300_000 }, async (t) => {
  const gates: { lookup?: FileGate } = {};
  const agent = buildPickingAgent(() => gates.lookup as FileGate);
  const { sessions, environment, engine } = await startStepwiseTestAgent(t, [agent.flow]);
  const gate = new FileGate(engine.directory, "lookup");
  gates.lookup = gate;

  await sessions.startSession("s1", { initialMessage: "hello", sessionSettings: { model: "large" } });
  await sessions.waitForTurnCount("s1", 1);
  assert.equal(agent.models.large.requests.length, 1);
  assert.equal(agent.models.small.requests.length, 0);
  assert.deepEqual(agent.instructionContexts.at(-1)?.sessionSettings, { model: "large" });
  const [turnCopy] = await environment.client.getAttributes("s1", agent.flow.turnSessionSettings);
  assert.deepEqual(turnCopy, { turnId: "turn-1", settings: { model: "large" } });
  assert.deepEqual((await sessions.getAgentSnapshot("s1")).sessionSettings, { model: "large" });

  // A turn whose first model call waits at the gate; the update lands while it runs.
  assert.equal(await sessions.sendUserMessage("s1", "look it up"), true);
  await gate.waitUntilReached({ timeoutMs: 15_000 });
  assert.equal(await sessions.updateSessionSettings("s1", { model: "small" }), true);
  assert.deepEqual((await sessions.getAgentSnapshot("s1")).sessionSettings, { model: "small" }, "the snapshot shows the next turn's settings");
  gate.open();
  await sessions.waitForTurnCount("s1", 2);
  // Both model calls of turn-2, before and after its tool call, used the settings it started with.
  assert.deepEqual(agent.models.large.requests.map((request) => request.turnId), ["turn-1", "turn-2", "turn-2"]);
  assert.equal(agent.models.small.requests.length, 0);

  await sessions.sendUserMessage("s1", "again");
  await sessions.waitForTurnCount("s1", 3);
  assert.deepEqual(agent.models.small.requests.map((request) => request.turnId), ["turn-3"]);
  assert.deepEqual(agent.instructionContexts.at(-1)?.sessionSettings, { model: "small" });

  // {} clears them: the next turn resolves with {} and the copy is gone.
  assert.equal(await sessions.updateSessionSettings("s1", {}), true);
  assert.deepEqual((await sessions.getAgentSnapshot("s1")).sessionSettings, {});
  await sessions.sendUserMessage("s1", "plain");
  await sessions.waitForTurnCount("s1", 4);
  assert.deepEqual(agent.instructionContexts.at(-1)?.sessionSettings, {});
  assert.deepEqual(await environment.client.getAttributes("s1", agent.flow.sessionSettings, agent.flow.turnSessionSettings), [undefined, undefined]);
  const snapshotWire = (await import("../../contract/values/agent-snapshot.ts")).agentSnapshotToWire(await sessions.getAgentSnapshot("s1"));
  assert.deepEqual(snapshotWire.session_settings, {});
});

void test("update_session_settings returns false for null and beyond the tolerance, and accepts up to MAX_SESSION_SETTINGS_BYTES plus the tolerance", { timeout: 300_000 }, async (t) => {
  const agent = buildPickingAgent();
  const { sessions } = await startStepwiseTestAgent(t, [agent.flow]);
  await sessions.startSession("s2", { sessionSettings: { model: "large" } });
  await sessions.waitForState("s2", () => true);
  assert.equal(await sessions.updateSessionSettings("s2", null), false);
  const limit = MAX_SESSION_SETTINGS_BYTES + SESSION_SETTINGS_SIZE_TOLERANCE_BYTES;
  assert.equal(await sessions.updateSessionSettings("s2", settingsOfSize(limit + 1)), false);
  assert.deepEqual((await sessions.getAgentSnapshot("s2")).sessionSettings, { model: "large" }, "a refused update changes nothing");
  assert.equal(await sessions.updateSessionSettings("s2", settingsOfSize(limit)), true);
  assert.equal(sessionSettingsSize((await sessions.getAgentSnapshot("s2")).sessionSettings ?? {}), limit);
  await assert.rejects(sessions.client.invokeRPC(agent.flow.updateSessionSettings, "s2", { sessionSettings: "large" as never }), /session settings must be a JSON object, got "large"/);
  await assert.rejects(sessions.client.invokeRPC(agent.flow.updateSessionSettings, "s2", {} as never), /needs sessionSettings/);
});

void test("a session started with settings beyond the tolerance fails at once with invalidStartSessionSettingsReason; the test client refuses them before starting", { timeout: 300_000 }, async (t) => {
  const agent = buildPickingAgent();
  const { sessions, environment } = await startStepwiseTestAgent(t, [agent.flow]);
  const tooLarge = settingsOfSize(MAX_SESSION_SETTINGS_BYTES + SESSION_SETTINGS_SIZE_TOLERANCE_BYTES + 1);
  await assert.rejects(sessions.startSession("refused", { initialMessage: "hi", sessionSettings: tooLarge }), TypeError);
  await assert.rejects(environment.client.describe("refused"), "the test client started nothing");

  await environment.client.start(agent.flow, "failed", { initial_message: "hi", session_settings: tooLarge });
  const failed = await pollUntil(async () => {
    const description = await environment.client.describe("failed");
    return description.status === "failed" ? description : undefined;
  }, { timeoutMs: 15_000, description: "the session to fail" });
  assert.ok(failed.error?.startsWith(invalidStartSessionSettingsReason), failed.error ?? "no error");
  assert.ok(failed.error?.includes(`${MAX_SESSION_SETTINGS_BYTES + SESSION_SETTINGS_SIZE_TOLERANCE_BYTES + 1} bytes`));
  assert.equal(agent.models.small.requests.length + agent.models.large.requests.length, 0, "no model call");
  const history = await environment.client.getStepHistory("failed");
  assert.deepEqual(history.filter((entry) => entry.stepType === "StartAgentSession").map((entry) => entry.attempt), [1], "no retry");

  await environment.client.start(agent.flow, "array", { session_settings: ["large"] });
  const arrayFailure = await pollUntil(async () => {
    const description = await environment.client.describe("array");
    return description.status === "failed" ? description : undefined;
  }, { timeoutMs: 15_000, description: "the array session to fail" });
  assert.ok(arrayFailure.error?.startsWith(`${invalidStartSessionSettingsReason}: session settings must be a JSON object`), arrayFailure.error ?? "");
});

void test("update_session_settings returns false before StartAgentSession initialized the session", { timeout: 300_000 }, async (t) => {
  const agent = buildPickingAgent();
  const engine = await PrivateEngine.start();
  // No Worker: the session is started but StartAgentSession has not run.
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [agent.flow], isWorkerInProcess: false });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  const sessions = new AgentSessionTestClient(environment.client, agent.flow);
  await sessions.startSession("early", { sessionSettings: { model: "large" } });
  assert.equal(await sessions.updateSessionSettings("early", { model: "small" }), false);
  assert.deepEqual((await sessions.getAgentSnapshot("early")).sessionSettings, {});
});

void test("with modelChoices, a settings model outside them (constructor, toString, __proto__) gets the default model; resolveModel sees only listed names", { timeout: 300_000 }, async (t) => {
  const reply = (name: string) => new ScriptedModelClient((request) => ({ text: `${name} answers ${lastUserText(request)}` }), { provider: name });
  const models: Record<string, ScriptedModelClient> = { small: reply("small"), large: reply("large") };
  const resolvedNames: unknown[] = [];
  const flow = createStepwiseAgentSessionFlow({
    name: "choosy",
    instructions: "Answer.",
    model: models.small as ScriptedModelClient,
    modelChoices: ["small", "large"],
    // The plain index lookup an application may write: inherited names would return Object's members.
    resolveModel: (settings) => {
      resolvedNames.push(settings.model);
      return models[String(settings.model)] ?? (models.small as ScriptedModelClient);
    },
  }, "ChoosyPicker");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  const names = ["constructor", "toString", "__proto__", "hasOwnProperty"];
  for (const [index, name] of names.entries()) {
    const sessionId = `choosy-${index}`;
    await sessions.startSession(sessionId, { initialMessage: `hello ${name}`, sessionSettings: { model: name } });
    const state = await sessions.waitForTurnCount(sessionId, 1);
    assert.equal(state.lastTurnError, null, `${name}: ${JSON.stringify(state.lastTurnError)}`);
  }
  assert.deepEqual(models.small?.requests.map((request) => lastUserText(request)), names.map((name) => `hello ${name}`));
  await sessions.startSession("choosy-large", { initialMessage: "hello large", sessionSettings: { model: "large" } });
  await sessions.waitForTurnCount("choosy-large", 1);
  assert.equal(models.large?.requests.length, 1);
  assert.deepEqual(resolvedNames, ["large"]);
});
