/**
 * Pins what an agent turn costs the store, counted rather than timed, so a
 * regression shows as a number: the turn of bench/peers-agents (one user
 * message, three model calls, a read tool and an idempotent-write tool) on
 * SQLite and PostgreSQL: the store transactions per turn, by the Step type
 * and method whose attempt made them (its commit, the claim after it, its
 * Stream writes and heartbeats). On PostgreSQL it also counts the statements
 * sent to the server.
 *
 * Requests are counted where the engine makes them: `Store.transaction`
 * and `Store.read`, and each one-request operation (`store.oneRequest`). A
 * request from an RPC is put under the RPC. The Worker's housekeeping loops
 * (liveness, cancellations, Timers, recovery) run on their own clocks and
 * the test's reads while it waits for the turn's end are not the turn's
 * work, so they are left out. When a count here changes, the change is on purpose: update the pin
 * and bench/RESULTS.md.
 */
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { after, describe, it } from "node:test";
import pg from "pg";
import { Client, Worker, type FlowCore, type Store } from "@perdure/engine";
import { createTemporaryPostgresSchema, createTemporarySqliteStore, pollUntil, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "@perdure/engine/testing";
import { ScriptedAgentRunner } from "../testing/scripted-agent-runner.ts";
import { createAgentSessionFlow, type AgentSessionFlow } from "./create-agent-session-flow.ts";

const readTool = "lookup_order";
const writeTool = "tag_order";

function turnRunner(): ScriptedAgentRunner {
  return new ScriptedAgentRunner((input) => {
    if (input.modelCall === 1) return { toolCalls: [{ name: readTool, arguments: { order_id: input.turnId } }] };
    if (input.modelCall === 2) return { toolCalls: [{ name: writeTool, arguments: { order_id: input.turnId, tag: "checked" } }] };
    return { text: `Order ${input.turnId} has shipped.` };
  }, {
    [readTool]: { effect: "read", execute: async (args) => `order ${String(args["order_id"])}: shipped` },
    [writeTool]: { effect: "idempotent_write", execute: async (args) => `order ${String(args["order_id"])} tagged` },
  });
}

/** Requests the Worker makes on its own clock: not part of a Step's cost. */
const uncountedCallers = ["touchLiveness", "checkCancellations", "fireDueTimers", "fireTimers", "recoverLapsed", "adoptLostClaims"];
/** The source of the test's own reads (waiting for the turn's end): not counted. */
const uncounted = "uncounted";

/** Which request kinds write (each its own store transaction); the rest only read. */
const writingRequests = new Set(["transaction", "commitStep", "claimTasks", "startFlow", "appendStream", "appendStreams", "heartbeat", "publishRpc"]);

interface Counts {
  /** Store transactions, by `<source> <request>`: the source is the Step method (`RunModel.execute`), `RPC`, or `Worker loop` (its own claims). */
  requests: Map<string, number>;
  /** PostgreSQL statements, by source. */
  statements: Map<string, number>;
}

type StepDefinitionOf<TFlow extends FlowCore> = TFlow["stepsByName"] extends ReadonlyMap<string, infer TDefinition> ? TDefinition : never;

/**
 * Counts the requests `store` gets (and, with `countStatements`, the
 * statements the pg driver sends), by their source: the Step method whose
 * attempt made them (its commit and the claims that follow it), an RPC, or
 * the Worker's loop claiming on its own.
 */
function countRequests(store: Store, flow: FlowCore, countStatements: boolean): { counts: Counts; counting: { on: boolean }; attempt: AsyncLocalStorage<string>; restore: () => void } {
  const counts: Counts = { requests: new Map(), statements: new Map() };
  const counting = { on: false };
  // The Step method an attempt ran, carried on to the attempt's commit (which awaits the method).
  const attempt = new AsyncLocalStorage<string>();
  const steps = flow.stepsByName as Map<string, StepDefinitionOf<FlowCore>>;
  for (const [name, definition] of [...steps]) {
    const { waitUntil, execute } = definition;
    steps.set(name, {
      ...definition,
      waitUntil: waitUntil === undefined ? undefined : (context, input) => {
        attempt.enterWith(`${name}.waitUntil`);
        return waitUntil(context, input);
      },
      execute: (context, input) => {
        attempt.enterWith(`${name}.execute`);
        return execute(context, input);
      },
    });
  }
  const source = (): string | undefined => {
    if (!counting.on) return undefined;
    const stack = new Error().stack ?? "";
    const from = attempt.getStore();
    if (from === uncounted || uncountedCallers.some((caller) => stack.includes(caller))) return undefined;
    return from ?? "Worker loop";
  };
  const record = (request: string): void => {
    const from = source();
    if (from === undefined || !writingRequests.has(request)) return;
    const key = `${from} ${request}`;
    counts.requests.set(key, (counts.requests.get(key) ?? 0) + 1);
  };
  const target = store as unknown as Record<string, ((...args: unknown[]) => unknown) | undefined>;
  for (const method of ["transaction", "read"]) {
    const original = target[method]?.bind(store);
    if (original === undefined) continue;
    target[method] = (...args: unknown[]) => {
      record(method);
      return original(...args);
    };
  }
  const oneRequest = store.oneRequest as unknown as Record<string, unknown> | undefined;
  for (const method of ["commitStep", "claimTasks", "startFlow", "readFlow", "readAttributes", "readSelection", "appendStream", "appendStreams", "heartbeat", "publishRpc"]) {
    const original = oneRequest?.[method];
    if (typeof original !== "function") continue;
    const bound = (original as (...args: unknown[]) => unknown).bind(oneRequest);
    Object.defineProperty(oneRequest, method, {
      configurable: true,
      value: (...args: unknown[]) => {
        record(method);
        return bound(...args);
      },
    });
  }
  const clientPrototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const originalQuery = clientPrototype.query;
  if (countStatements) {
    clientPrototype.query = function countedQuery(this: unknown, ...args: unknown[]): unknown {
      const from = source();
      if (from !== undefined) counts.statements.set(from, (counts.statements.get(from) ?? 0) + 1);
      return originalQuery.apply(this, args);
    };
  }
  return { counts, counting, attempt, restore: () => { clientPrototype.query = originalQuery; } };
}

async function runTurns(store: Store, turns: number, countStatements: boolean): Promise<Counts> {
  const flow: AgentSessionFlow = createAgentSessionFlow(turnRunner(), "StoreCostAgent");
  const { counts, counting, attempt, restore } = countRequests(store, flow, countStatements);
  const errors: unknown[] = [];
  // A window no turn outlasts, so each Step's Stream writes are one batch at its drain whatever the machine's load:
  // with the default window a slow attempt may send two (the count of a Step that outlasts it, on purpose).
  const worker = new Worker({ store, flows: [flow], concurrency: 4, streamBatchWindowMs: 60_000, onError: (error) => errors.push(error) });
  const client = new Client({ store });
  await worker.start();
  try {
    await client.start(flow, "session-1", {});
    for (let turn = 1; turn <= turns + 1; turn += 1) {
      // The first turn warms up (the session's first Steps); the rest are counted.
      counting.on = turn > 1;
      assert.equal(await attempt.run("RPC", () => client.invokeRPC(flow.sendUserMessage, "session-1", { text: `Where is order ${turn}?` })), true);
      const [state] = await attempt.run(uncounted, () => client.waitForAttributes("session-1", [flow.agentState], ([current]) => current !== undefined && current.turnCount >= turn && current.activeTurnId === null, { timeoutMs: 60_000 }));
      assert.equal(state?.lastTurnError, null, `turn ${turn}`);
      // The turn's last Step commits its wait for the next message after AgentState says the turn ended.
      await pollUntil(async () => {
        const history = await attempt.run(uncounted, () => client.getStepHistory("session-1"));
        return history.filter((entry) => entry.stepType === "AwaitUserMessage" && entry.method === "wait_until" && entry.status === "completed").length === turn + 1;
      }, { timeoutMs: 60_000 });
    }
    counting.on = false;
  } finally {
    restore();
    await worker.close();
  }
  assert.deepEqual(errors, []);
  return counts;
}

function perTurn(counts: Map<string, number>, turns: number): Record<string, number> {
  return Object.fromEntries([...counts].sort(([left], [right]) => left.localeCompare(right)).map(([key, count]) => [key, count / turns]));
}

function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((sum, count) => sum + count, 0);
}

const turns = 4;

/** Splits the Worker loop's own claims (how many depends on when wake-ups arrive) from the Steps' and RPCs' requests (fixed). */
function split(counts: Record<string, number>): { fixed: Record<string, number>; loop: number } {
  const fixed = Object.fromEntries(Object.entries(counts).filter(([key]) => !key.startsWith("Worker loop")));
  return { fixed, loop: total(counts) - total(fixed) };
}

/**
 * The pins, per turn. A Step method's requests are its commit (`commitStep`
 * in one request, or a `transaction`), the claim after it when the commit
 * could not claim the next Step itself (a `transaction`), its Stream writes
 * (a batch, `appendStreams`, or a `transaction` on SQLite, at each
 * heartbeat and before the commit) and its heartbeats. Before the Worker
 * batched them (migration 0013), every Stream write was a request of its
 * own: 12 a turn (7 of them `RunModel`'s), then 8. Since a Step commit
 * carries the attempt's last Stream messages and a heartbeat the ones
 * before it (migration 0020 on PostgreSQL), none is a request of its own. `CallTool` stores
 * `tool_call_started` at its heartbeat before the tool runs. On PostgreSQL every commit's claim
 * takes the next Step, locks and loads included (migration 0008): before
 * it, `AwaitUserMessage`, `RunModel` and `ResumeTurn` each needed a claim
 * transaction after their commit (32 requests a turn, and about 7 claims of
 * the Worker loop). Since migration 0009 the commits with conditions or
 * publishes (`AwaitUserMessage.waitUntil`, `ResumeTurn.waitUntil`,
 * `CallTool.execute`) are one `commitStep` each too, where they were general
 * transactions.
 */
const sqliteRequestsPerTurn = {
  "AwaitUserMessage.execute transaction": 1,
  "AwaitUserMessage.waitUntil transaction": 1,
  "CallTool.execute transaction": 4,
  "ResumeTurn.execute transaction": 2,
  "ResumeTurn.waitUntil transaction": 2,
  "RPC transaction": 1,
  // The turn's last model call moves to AwaitUserMessage, whose wait loads nothing (`waitUntilLoad: []`): one request.
  "RunModel.execute commitStep": 1,
  "RunModel.execute transaction": 2,
};
const postgresRequestsPerTurn = {
  "AwaitUserMessage.execute commitStep": 1,
  "AwaitUserMessage.waitUntil commitStep": 1,
  "CallTool.execute commitStep": 2,
  // Before the tool runs, with `tool_call_started` in the same request: it is stored before the side effect.
  "CallTool.execute heartbeat": 2,
  "ResumeTurn.execute commitStep": 2,
  "ResumeTurn.waitUntil commitStep": 2,
  "RPC publishRpc": 1,
  "RunModel.execute commitStep": 3,
};
/**
 * PostgreSQL statements per turn from the Steps and the RPC (154 before
 * migration 0009; 104 with it, every Step commit one request; 49 when a
 * claimed Step's selection became one statement; 41 with migration 0010,
 * which reads a static selection in the claim; 29 with migration 0014, which
 * makes `send_user_message` one request where its transaction took 14; 27
 * when a tool Step's movement carries its selection, which the claim reads;
 * 23 with migration 0013, the Stream writes batched: at a heartbeat and
 * before the commit; 14 with migrations 0020 and 0021, the last batch in
 * the commit, the others in the heartbeat, and the RPC's NOTIFY in its
 * request), within
 * {@link statementSlack}: a tool call and the Step waiting for its result
 * run side by side, and whichever claims the next Step first sends its
 * statements, so the split between Step types varies; the sum barely does.
 */
const postgresStatementsPerTurn = 14;
const statementSlack = 3;
/**
 * The Worker loop claims when wake-ups arrive between commits, so its count
 * varies from run to run: bounded, not pinned (SQLite about 1.5–7 a turn;
 * PostgreSQL 1, the claim that takes the user's message, where it was
 * 5–9 before migration 0008 and 2.5–3.3 before migration 0019, whose
 * claims tell that nothing was left to wake the loop for).
 */
const loopRequestsPerTurnAtMost = { sqlite: 12, postgres: 6 };

describe("the store cost of an agent turn (pinned counts)", () => {
  const disposals: (() => Promise<void>)[] = [];
  after(async () => {
    for (const dispose of disposals) await dispose();
  });

  it("SQLite: store transactions per turn, by the Step method that made them", async () => {
    const temporary = createTemporarySqliteStore({ durability: "full" });
    disposals.push(async () => temporary.dispose());
    const counts = await runTurns(temporary.store, turns, false);
    const { fixed, loop } = split(perTurn(counts.requests, turns));
    assert.deepEqual(fixed, sqliteRequestsPerTurn);
    assert.equal(total(fixed), 14);
    assert.ok(loop <= loopRequestsPerTurnAtMost.sqlite, `the Worker loop made ${loop} requests per turn`);
  });

  it("PostgreSQL: store transactions and statements per turn, by the Step method that made them", { skip: postgresTestSkip(testDatabaseUrl()) }, async () => {
    const schema = createTemporaryPostgresSchema(requireTestDatabaseUrl());
    disposals.push(() => schema.dispose());
    const store = await schema.open({ poolSize: 8 });
    const counts = await runTurns(store, turns, true);
    const { fixed, loop } = split(perTurn(counts.requests, turns));
    assert.deepEqual(fixed, postgresRequestsPerTurn);
    assert.equal(total(fixed), 14);
    assert.ok(loop <= loopRequestsPerTurnAtMost.postgres, `the Worker loop made ${loop} requests per turn`);
    const statements = split(perTurn(counts.statements, turns));
    const sent = total(statements.fixed);
    assert.ok(Math.abs(sent - postgresStatementsPerTurn) <= statementSlack, `${sent} statements per turn (${JSON.stringify(statements.fixed)}), pinned at ${postgresStatementsPerTurn}`);
  });
});
