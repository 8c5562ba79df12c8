/**
 * A child process of the paused-process tests, with default store and Worker
 * options on the SQLite file PERDURE_PAUSE_STORE_PATH. Role `paused`
 * (PERDURE_PAUSE_ROLE) runs its Worker through a `PausingStore` and stops
 * itself at PERDURE_PAUSE_AT; an `rpc:` point also invokes the `writeNote` RPC on
 * the Flow it holds, and `trace` does everything without pausing and prints
 * the calls of each kind of transaction. Role `taker` runs a plain Worker and starts the Flow
 * `progress`, which only a Worker that can still commit completes.
 */
import { Client } from "../../client/client.ts";
import { workerReadyLine } from "../../testing/worker-process.ts";
import { Worker } from "../../worker/worker.ts";
import { SqliteStore } from "../sqlite-store.ts";
import { pausePoint, processRole } from "./pause-point.ts";
import { pausedFlow } from "./paused-flow.ts";
import { PausingStore } from "./pausing-store.ts";

const path = process.env["PERDURE_PAUSE_STORE_PATH"];
if (path === undefined || path === "") throw new Error("set PERDURE_PAUSE_STORE_PATH to the SQLite file of the test");
const role = processRole();
const store = SqliteStore.open({ path });
const workerStore = role === "paused" ? new PausingStore(store) : store;
const worker = new Worker({ store: workerStore, flows: [pausedFlow], onError: (error) => console.error(`${role} worker:`, error) });

process.on("SIGTERM", () => {
  void worker.close().then(() => store.close()).then(() => process.exit(0), (error: unknown) => {
    console.error(`${role}: close failed:`, error);
    process.exit(1);
  });
});
// Detached children outlive a parent that crashed; leave when reparented.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(2);
}, 500).unref();

await worker.start();
console.log(`${workerReadyLine} ${worker.workerId}`);
const client = new Client({ store: workerStore });
if (role === "taker") {
  await client.start(pausedFlow, "progress", { hold: false });
  console.log("started progress");
} else if (pausePoint()?.startsWith("rpc:") === true || pausePoint() === "trace") {
  while (globalThis.perdurePausedHolding !== true) await new Promise((resolve) => setTimeout(resolve, 10));
  try {
    const output = await client.invokeRPC(pausedFlow.writeNote, "held", "from the paused process");
    console.log(`rpc returned ${output}`);
  } catch (error) {
    console.log(`rpc failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
