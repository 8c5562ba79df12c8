/**
 * A process SIGSTOPped inside a SQLite transaction must not stall the other
 * processes on the file. A `paused` child process (default store and Worker
 * options) holds a Step's lease and stops itself at one point of one of its
 * transactions: every store call and both ends of a Worker's commit, of a
 * claim, of an idle poll and of a liveness write, and inside an RPC handler
 * that awaits. Meanwhile a `taker` process with default options must start
 * and finish new work and take over the paused process's Steps once its
 * liveness lapses. Then the paused process continues, and its late
 * transaction must change nothing the taker decided.
 *
 * Every point is reached after the event loop turned (the pause awaits a
 * timer first), as when a transaction waits on anything but the store: the
 * test process reads the file through a read-only connection, so it never
 * waits for the write lock itself.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "../client/client.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { startWorkerProcess, type WorkerProcess } from "../testing/worker-process.ts";
import { pausedFlow } from "./paused-process-fixtures/paused-flow.ts";
import { SqliteStore } from "./sqlite-store.ts";

const entryModulePath = fileURLToPath(new URL("./paused-process-fixtures/process-main.ts", import.meta.url));

/** The Flow the paused process holds a lease on; the taker must take it over. */
const heldFlowId = "held";
/** The Flow whose claim or commit the paused process is stopped in. */
const claimedFlowId = "claimed";
/** Started by the taker after the pause: new work must still run. */
const progressFlowId = "progress";

/** Spawns a child in `role` on `path`. */
function spawnChild(role: "paused" | "taker", path: string, pauseAt?: string): Promise<WorkerProcess> {
  return startWorkerProcess({
    entryModulePath,
    env: { PERDURE_PAUSE_ROLE: role, PERDURE_PAUSE_STORE_PATH: path, ...(pauseAt === undefined ? {} : { PERDURE_PAUSE_AT: pauseAt }) },
  });
}

function waitForLine(child: WorkerProcess, text: string, timeoutMs = 20_000): Promise<string> {
  return pollUntil(() => child.output().split("\n").find((line) => line.startsWith(text)), { timeoutMs, intervalMs: 10, description: `"${text}" from process ${child.pid}:\n${child.output()}` });
}

/** The state letter of /proc/<pid>/stat: `T` when stopped. */
function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
}

/** Reads the file without ever taking SQLite's write lock (WAL readers do not need it). */
class ReadOnlyView {
  private readonly database: DatabaseSync;

  constructor(path: string) {
    this.database = new DatabaseSync(path, { readOnly: true });
  }

  status(flowId: string): string | undefined {
    return (this.database.prepare("SELECT status FROM flows WHERE flow_id = ?").get(flowId) as { status: string } | undefined)?.status;
  }

  attribute(flowId: string, name: string): unknown {
    const row = this.database.prepare("SELECT value FROM attributes WHERE flow_id = ? AND name = ? AND key = ''").get(flowId, name) as { value: string } | undefined;
    return row === undefined ? undefined : JSON.parse(row.value) as unknown;
  }

  completedExecutes(flowId: string): number {
    return (this.database.prepare("SELECT COUNT(*) AS count FROM history WHERE flow_id = ? AND method = 'execute' AND status = 'completed'").get(flowId) as { count: number }).count;
  }

  close(): void {
    this.database.close();
  }
}

interface Scenario {
  path: string;
  store: SqliteStore;
  client: Client;
  /** Children to SIGCONT and SIGKILL when the test ends. */
  children: WorkerProcess[];
}

function setUp(t: TestContext): Scenario {
  const folder = mkdtempSync(join(tmpdir(), "perdure-paused-"));
  const path = join(folder, "engine.db");
  const store = SqliteStore.open({ path });
  const children: WorkerProcess[] = [];
  t.after(async () => {
    for (const child of children) {
      try {
        process.kill(child.pid, "SIGCONT");
      } catch {
        // Already gone.
      }
      await child.kill();
    }
    for (const child of children) {
      const lines = child.output().split("\n").filter((line) => /error/i.test(line));
      if (lines.length > 0) t.diagnostic(`process ${child.pid} printed:\n${lines.slice(0, 20).join("\n")}`);
    }
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });
  return { path, store, client: new Client({ store }), children };
}

/** The pause points of each kind of transaction, from a run that prints every transaction's calls. */
async function discoverPausePoints(t: TestContext): Promise<string[]> {
  const scenario = setUp(t);
  await scenario.client.start(pausedFlow, heldFlowId, { hold: true });
  const tracer = await spawnChild("paused", scenario.path, "trace");
  scenario.children.push(tracer);
  await waitForLine(tracer, `holding ${heldFlowId}`);
  await scenario.client.start(pausedFlow, claimedFlowId, { hold: false });
  const kinds = ["poll", "claim", "commit", "liveness", "rpc"];
  const traced = new Map<string, { identifiedAt: number; calls: string[] }>();
  await pollUntil(() => {
    for (const line of tracer.output().split("\n")) {
      const match = /^transaction (\w+) identified-at (\d+) calls (.*)$/.exec(line);
      if (match !== null && !traced.has(match[1]!)) traced.set(match[1]!, { identifiedAt: Number(match[2]), calls: match[3]!.split(" ") });
    }
    return kinds.every((kind) => traced.has(kind));
  }, { timeoutMs: 20_000, description: `a traced transaction of each kind (${kinds.join(", ")}):\n${tracer.output()}` });
  const points = ["rpc:handler"];
  for (const kind of kinds) {
    const { identifiedAt, calls } = traced.get(kind)!;
    t.diagnostic(`${kind}: ${calls.join(" ")}`);
    if (identifiedAt === 0) points.push(`${kind}:start`);
    for (let call = Math.max(identifiedAt, 1); call <= calls.length; call += 1) points.push(`${kind}:call-${call}`);
    points.push(`${kind}:end`);
  }
  await tracer.kill();
  return points;
}

async function runPausedAt(t: TestContext, point: string): Promise<void> {
  const scenario = setUp(t);
  const kind = point.slice(0, point.indexOf(":"));
  const claims = kind === "claim" || kind === "commit";
  await scenario.client.start(pausedFlow, heldFlowId, { hold: true });
  const paused = await spawnChild("paused", scenario.path, point);
  scenario.children.push(paused);
  await waitForLine(paused, `holding ${heldFlowId}`);
  if (claims) await scenario.client.start(pausedFlow, claimedFlowId, { hold: false });
  await waitForLine(paused, `paused at ${point}`);
  await pollUntil(() => processState(paused.pid) === "T", { description: `process ${paused.pid} to stop` });
  // From here on this process only reads, through a connection that never takes the write lock.
  await scenario.store.close();
  const view = new ReadOnlyView(scenario.path);
  t.after(() => view.close());

  const pausedAt = Date.now();
  const taker = await spawnChild("taker", scenario.path);
  scenario.children.push(taker);
  const flows = [progressFlowId, heldFlowId, ...(claims ? [claimedFlowId] : [])];
  try {
    await pollUntil(() => flows.every((flowId) => view.status(flowId) === "completed"), { timeoutMs: 30_000, intervalMs: 50, description: `${flows.join(", ")} to complete` });
  } catch (error) {
    assert.fail(`with a process stopped at ${point}, the taker did not finish ${flows.map((flowId) => `${flowId} (${view.status(flowId) ?? "not started"})`).join(", ")} `
      + `within 30 s: ${String(error)}\ntaker printed:\n${taker.output()}`);
  }
  t.diagnostic(`stopped at ${point}: the taker finished new work and took over within ${Date.now() - pausedAt} ms`);
  assert.equal(processState(paused.pid), "T", "the paused process stayed stopped while the taker worked");
  for (const flowId of flows) assert.equal(view.attribute(flowId, "DoneBy"), "taker", `${flowId} was committed by the taker`);

  process.kill(paused.pid, "SIGCONT");
  const resumed = await waitForLine(paused, "resumed:");
  t.diagnostic(`the paused transaction, continued: ${resumed}`);
  if (kind === "rpc") {
    // The RPC commits once its process continues, on top of what the taker committed.
    assert.match(await waitForLine(paused, "rpc "), /^rpc returned from the paused process$/);
    assert.equal(view.attribute(heldFlowId, "Note"), "from the paused process");
  }
  // A drained close lets every transaction of the continued process finish before it exits.
  assert.equal(await paused.stop({ timeoutMs: 20_000 }), 0, `the continued process closed cleanly:\n${paused.output()}`);
  for (const flowId of flows) {
    assert.equal(view.status(flowId), "completed");
    assert.equal(view.attribute(flowId, "DoneBy"), "taker", `the paused process's late transaction left ${flowId} as the taker committed it`);
    assert.equal(view.completedExecutes(flowId), 1, `${flowId} has one committed execute`);
  }
  await taker.stop();
}

void test("a process SIGSTOPped at any point of a SQLite transaction does not stop other processes from working and taking over", {
  timeout: 900_000,
  concurrency: 4,
  skip: process.platform === "win32" ? "needs SIGSTOP and /proc" : false,
}, async (t) => {
  const points = process.env["PERDURE_PAUSE_POINTS"]?.split(",") ?? await discoverPausePoints(t);
  t.diagnostic(`pause points: ${points.join(", ")}`);
  await Promise.all(points.map((point) => t.test(`stopped at ${point}`, { timeout: 300_000 }, (subtest) => runPausedAt(subtest, point))));
});
