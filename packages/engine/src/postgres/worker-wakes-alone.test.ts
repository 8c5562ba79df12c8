/**
 * A store whose Workers are the only ones alive sends no NOTIFY for events
 * only Workers act on: they would reach only its own process, which heard
 * them already. Once a Worker of another process is alive (seen at the
 * next liveness write), the NOTIFYs go out again.
 * docs/decisions/2026-12-07-worker-wakes-stay-home-when-alone.md
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { deadEnd, moveToMany, movement } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { Worker } from "../worker/worker.ts";
import { listenForWakes } from "./test-fixtures/wake-listener.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const skip = postgresTestSkip(testDatabaseUrl());

/** Fan moves to Left and Right: on a Worker with one slot its commit claims one and leaves the other, so it wakes Workers. */
const fanFlow = defineFlow({
  type: "AloneFan",
  start: "Fan",
  steps: [
    defineStep("Fan", { execute: () => moveToMany([movement("Left"), movement("Right")]) }),
    defineStep("Left", { execute: () => deadEnd() }),
    defineStep("Right", { execute: () => deadEnd() }),
  ],
});

void test("a store whose Workers are the only ones alive sends no NOTIFY for Workers' wake-ups, and sends them once another process's Worker is alive", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const { heard, end } = await listenForWakes(temporary);
  t.after(end);

  const worker = new Worker({ store, flows: [fanFlow], concurrency: 1 });
  await worker.start();
  t.after(() => worker.close());
  const client = new Client({ store });
  const finished = async (flowId: string): Promise<void> => {
    await pollUntil(async () => (await client.getStepHistory(flowId)).filter((entry) => entry.status === "completed").length === 3, { timeoutMs: 60_000, description: `${flowId}'s three Steps` });
  };

  await client.start(fanFlow, "alone", {});
  await finished("alone");
  // A NOTIFY sent before the history read would have arrived by now; give a late one a moment.
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(heard.filter((entry) => entry.startsWith("tasks")), [], "no Worker elsewhere: Fan's commit woke only this process");

  // A Worker of another process (another store object) starts; this store sees it at its Worker's next liveness write.
  const elsewhere = await temporary.open();
  const other = new Worker({ store: elsewhere, flows: [fanFlow], concurrency: 1 });
  await other.start();
  t.after(() => other.close());
  let round = 0;
  await pollUntil(async () => {
    round += 1;
    await client.start(fanFlow, `together-${round}`, {});
    await finished(`together-${round}`);
    return heard.some((entry) => entry.startsWith("tasks"));
  }, { timeoutMs: 30_000, description: "a tasks NOTIFY once another process's Worker is alive" });

  await other.close();
  await worker.close();
  await elsewhere.close();
});
