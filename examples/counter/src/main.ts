/**
 * Runs the countdown Flow on the embedded SQLite store in `.perdure/`.
 * Kill it mid-way and run it again: the same Flow continues where it was.
 */
import { Client, Worker } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import { countdownFlow } from "./countdown-flow.ts";

const databaseUrl = process.env.PERDURE_DATABASE_URL;
const databasePath = process.env.PERDURE_SQLITE_PATH ?? ".perdure/countdown.db";
// PERDURE_DATABASE_URL selects PostgreSQL, as for every perdure command.
const store = databaseUrl === undefined || databaseUrl === ""
  ? SqliteStore.open({ path: databasePath })
  : await (await import("@perdure/engine/postgres")).PostgresStore.open({ connectionString: databaseUrl });
const worker = new Worker({ store, flows: [countdownFlow] });
const client = new Client({ store });
await worker.start();

// A countdown left running by a killed earlier run continues; otherwise start a new one.
const [unfinished] = await client.listFlows({ flowType: countdownFlow.flowType, status: "running", limit: 1 });
const flowId = unfinished?.flowId ?? `countdown-${Date.now()}`;
if (unfinished === undefined) await client.start(countdownFlow, flowId, { from: 5, tickMs: 300 });
console.log(`${unfinished === undefined ? "started" : "resumed"} ${flowId} on ${databaseUrl === undefined || databaseUrl === "" ? databasePath : "PostgreSQL"}`);

let after: string | undefined;
for (;;) {
  const read = await client.readStream(flowId, countdownFlow.progress, { waitMs: 1000, ...(after === undefined ? {} : { after }) });
  for (const message of read.messages) console.log(`  remaining ${message.value.remaining}`);
  after = read.nextToken;
  const description = await client.describe(flowId);
  if (description.status !== "running") {
    console.log(`${flowId} ${description.status}: ${JSON.stringify(description.output)}`);
    break;
  }
}
const history = await client.getStepHistory(flowId);
console.log(`Step history: ${history.map((entry) => `${entry.stepType}.${entry.method}`).join(" → ")}`);
await worker.close();
await store.close();
