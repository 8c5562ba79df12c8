/**
 * `AwaitUserMessage.execute` loads the `AgentMessages` window only when the
 * message it stores may roll the window over: the decision from plain
 * Attributes, and chat turns on SQLite and PostgreSQL with a window of 8
 * messages in chunks of 4, where the Step loads nothing in most turns, loads
 * the window in the turns whose message rolls it over, and every message
 * stays readable in order.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { Client, Worker, type FlowCore, type PlainAttributeReader, type Store } from "@perdure/engine";
import { createTemporaryPostgresSchema, createTemporarySqliteStore, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "@perdure/engine/testing";
import type { AgentMessagePage } from "../../contract/values/agent-message-page.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";
import { ScriptedAgentRunner } from "../../testing/scripted-agent-runner.ts";
import { createAgentSessionFlow, type AgentSessionFlow } from "../create-agent-session-flow.ts";
import type { AgentMessageIndex } from "../messages/agent-message-index.ts";
import { createAgentSessionPersistence } from "../persistence.ts";
import { AgentStepType } from "../step-types.ts";
import { awaitUserMessageLoads } from "./await-user-message.ts";

const limits = { messageWindowSize: 8, messageChunkSize: 4 };

function plainAttributes(persistence: ReturnType<typeof createAgentSessionPersistence>, messageCount: number | undefined, index?: AgentMessageIndex): PlainAttributeReader {
  return {
    read: <TValue>(attribute: { name: string }): TValue | undefined => {
      if (attribute.name === persistence.agentState.name) return messageCount === undefined ? undefined : ({ messageCount } as unknown as TValue);
      if (attribute.name === persistence.agentMessageIndex.name) return index as unknown as TValue | undefined;
      return undefined;
    },
  } as PlainAttributeReader;
}

type StepDefinitionOf<TFlow extends FlowCore> = TFlow["stepsByName"] extends ReadonlyMap<string, infer TDefinition> ? TDefinition : never;

/** How many `AgentMessages` instances each `AwaitUserMessage.execute` attempt found loaded, in order. */
function recordWindowLoads(flow: AgentSessionFlow): number[] {
  const loaded: number[] = [];
  const steps = flow.stepsByName as Map<string, StepDefinitionOf<FlowCore>>;
  const definition = steps.get(AgentStepType.AwaitUserMessage)!;
  const { execute } = definition;
  steps.set(AgentStepType.AwaitUserMessage, {
    ...definition,
    execute: (context, input) => {
      loaded.push(context.loadedKeys(flow.agentMessages).length);
      return execute(context, input);
    },
  });
  return loaded;
}

async function readEveryMessage(client: Client, flow: AgentSessionFlow, flowId: string): Promise<number[]> {
  const sequences: number[] = [];
  let beforeSequence: number | null = null;
  for (;;) {
    const page: AgentMessagePage = await client.invokeRPC(flow.listAgentMessages, flowId, { beforeSequence, limit: 3 });
    sequences.unshift(...page.messages.map((message) => message.sequence));
    if (page.nextBeforeSequence === null) return sequences;
    beforeSequence = page.nextBeforeSequence;
  }
}

/** Eight chat turns of two messages each (the user's, the model's answer); returns the window loads and what was stored. */
async function runChatTurns(store: Store): Promise<{ loaded: number[]; states: AgentState[]; sequences: number[] }> {
  const flow = createAgentSessionFlow(new ScriptedAgentRunner((input) => ({ text: `answer to ${input.turnId}` }), {}), "WindowLoads", limits);
  const loaded = recordWindowLoads(flow);
  const errors: unknown[] = [];
  const worker = new Worker({ store, flows: [flow], concurrency: 2, onError: (error) => errors.push(error) });
  const client = new Client({ store });
  await worker.start();
  const states: AgentState[] = [];
  try {
    await client.start(flow, "window-loads", {});
    for (let turn = 1; turn <= 8; turn += 1) {
      assert.equal(await client.invokeRPC(flow.sendUserMessage, "window-loads", { text: `message ${turn}` }), true);
      const [state] = await client.waitForAttributes("window-loads", [flow.agentState], ([current]) => current !== undefined && current.turnCount >= turn && current.activeTurnId === null, { timeoutMs: 60_000 });
      assert.equal(state?.lastTurnError, null, `turn ${turn}`);
      states.push(state!);
    }
    return { loaded, states, sequences: await readEveryMessage(client, flow, "window-loads") };
  } finally {
    await worker.close();
    assert.deepEqual(errors, []);
  }
}

/**
 * The window before each turn's user message, with a window of 8 and chunks
 * of 4: 0, 2, 4, 6 messages, then 8 (the message makes 9, a chunk of 4 moves:
 * 5, and the answer 6), then 6, 8, 6. The Step loads from 7 on.
 */
const expectedLoads = [0, 0, 0, 0, 8, 0, 8, 0];

function assertTurns(result: { loaded: number[]; states: AgentState[]; sequences: number[] }): void {
  assert.deepEqual(result.states.map((state) => state.messageCount), [2, 4, 6, 8, 10, 12, 14, 16]);
  assert.deepEqual(result.loaded, expectedLoads);
  assert.deepEqual(result.sequences, Array.from({ length: 16 }, (_unused, offset) => offset + 1), "every message, once, in order");
}

describe("AwaitUserMessage loads the message window only when its message may roll it over", () => {
  const disposals: (() => Promise<void>)[] = [];
  after(async () => {
    for (const dispose of disposals) await dispose();
  });

  it("decides from AgentState and AgentMessageIndex, with one message of margin", () => {
    const persistence = createAgentSessionPersistence({ eventStreamCapacityBytes: 1024 * 1024, ...limits });
    const loads = awaitUserMessageLoads(persistence);
    const all = [persistence.agentMessages.all()];
    // Not started yet: no state to decide from.
    assert.deepEqual(loads(null, plainAttributes(persistence, undefined)), all);
    // No index: every message is in the window.
    assert.deepEqual(loads(null, plainAttributes(persistence, 6)), []);
    assert.deepEqual(loads(null, plainAttributes(persistence, 7)), all);
    assert.deepEqual(loads(null, plainAttributes(persistence, 8)), all);
    // Messages 1-4 in a chunk: 5-10 are the window's 6, 5-11 its 7.
    const moved: AgentMessageIndex = { chunks: [{ firstSequence: 1, lastSequence: 4 }], firstSequence: 1, windowFirstSequence: 5 };
    assert.deepEqual(loads(null, plainAttributes(persistence, 10, moved)), []);
    assert.deepEqual(loads(null, plainAttributes(persistence, 11, moved)), all);
    // An oversized message's own chunk inside the window does not count: 5-11 with 9 in its chunk is 6.
    const oversized: AgentMessageIndex = { chunks: [{ firstSequence: 1, lastSequence: 4 }, { firstSequence: 9, lastSequence: 9 }], firstSequence: 1, windowFirstSequence: 5 };
    assert.deepEqual(loads(null, plainAttributes(persistence, 11, oversized)), []);
    // A window over its size (a rollover that a commit's bounds cut short) loads.
    assert.deepEqual(loads(null, plainAttributes(persistence, 40, moved)), all);
  });

  it("SQLite: most turns load nothing, the rollover turns load the window, and every message stays", async () => {
    const temporary = createTemporarySqliteStore({ durability: "full" });
    disposals.push(async () => temporary.dispose());
    assertTurns(await runChatTurns(temporary.store));
  });

  it("PostgreSQL: most turns load nothing, the rollover turns load the window, and every message stays", { skip: postgresTestSkip(testDatabaseUrl()) }, async () => {
    const schema = createTemporaryPostgresSchema(requireTestDatabaseUrl());
    disposals.push(() => schema.dispose());
    assertTurns(await runChatTurns(await schema.open({ poolSize: 4 })));
  });
});
