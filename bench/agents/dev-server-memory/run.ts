/**
 * `perdure dev`'s memory under concurrent streaming chat clients: starts the
 * real CLI on the repository's demo entry (scripted model, fresh SQLite
 * file), then for each client count runs that many clients at once, each
 * with its own session, each sending a message with `POST /api/chat` and
 * reading the UI message stream to its end, again and again, for the load
 * time. Prints the server's resident memory (VmRSS) before the load, its
 * peak during it and after an idle time, and the CPU time it spent per
 * completed turn, one fresh server per client count.
 *
 *   node bench/agents/dev-server-memory/run.ts [--clients=20,100] [--load-seconds=30] [--idle-seconds=20] [--heap-snapshots=<folder>]
 *     [--node-flags="--max-semi-space-size=1"] [--server-env=MALLOC_ARENA_MAX=2]
 *
 * With --heap-snapshots the server writes a heap snapshot at the start, at
 * the peak of the load and after the idle time (SIGUSR2), for DevTools.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const repositoryRoot = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const cliPath = join(repositoryRoot, "packages/cli/src/cli.ts");
const entryPath = join(repositoryRoot, "perdure.agents.ts");

const { values } = parseArgs({
  options: {
    clients: { type: "string", default: "20,100" },
    "load-seconds": { type: "string", default: "30" },
    "idle-seconds": { type: "string", default: "20" },
    "heap-snapshots": { type: "string" },
    port: { type: "string", default: "4391" },
    "node-flags": { type: "string", default: "" },
    "server-env": { type: "string", default: "" },
  },
});
const clientCounts = values.clients.split(",").map(Number);
const loadMs = Number(values["load-seconds"]) * 1000;
const idleMs = Number(values["idle-seconds"]) * 1000;
const serverNodeFlags = values["node-flags"].split(" ").filter((flag) => flag !== "");
const serverEnvironment = Object.fromEntries(values["server-env"].split(",").filter((pair) => pair.includes("=")).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]));
const snapshotFolder = values["heap-snapshots"] === undefined ? undefined : resolve(values["heap-snapshots"]);

const mebibytes = (bytes: number): number => Math.round(bytes / 1024 / 1024);
const sleep = (ms: number): Promise<void> => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

function residentBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? 0) * 1024;
}

/** CPU seconds (user + system) the process used so far. */
function cpuSeconds(pid: number): number {
  // Fields after the command name (which is in parentheses): utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Server {
  pid: number;
  origin: string;
  folder: string;
  log(): string;
  stop(): Promise<void>;
}

async function startServer(port: number): Promise<Server> {
  const folder = mkdtempSync(join(tmpdir(), "perdure-dev-memory-"));
  const flags = snapshotFolder === undefined ? [] : ["--heapsnapshot-signal=SIGUSR2"];
  const child = spawn(process.execPath, [...serverNodeFlags, ...flags, cliPath, "dev", "--port", String(port), "--db", join(folder, "dev.db"), entryPath], {
    cwd: folder,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", PERDURE_DATABASE_URL: "", PERDURE_DEV_TOKEN: "", OTEL_EXPORTER_OTLP_ENDPOINT: "", PERDURE_NOTES_FILE: join(folder, "notes.json"), ...serverEnvironment },
  });
  let output = "";
  const exited = new Promise<void>((resolveExit) => child.once("exit", () => resolveExit()));
  await new Promise<void>((resolveStart, reject) => {
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      if (/web UI and API at /.test(output)) resolveStart();
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    void exited.then(() => reject(new Error(`perdure dev exited:\n${output}`)));
  });
  if (child.pid === undefined) throw new Error("no pid");
  return {
    pid: child.pid,
    origin: `http://127.0.0.1:${port}`,
    folder,
    log: () => output,
    stop: async () => {
      child.kill("SIGKILL");
      await exited;
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

const json = { "content-type": "application/json" };

/** fetch that names the request when the connection fails. */
async function fetchWithContext(url: string, description: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    throw new Error(`${description}: ${error instanceof Error ? `${error.message} (${String((error as { cause?: unknown }).cause)})` : String(error)}`, { cause: error });
  }
}

async function chatOnce(origin: string, sessionId: string, messageNumber: number): Promise<number> {
  const response = await fetchWithContext(`${origin}/api/chat`, `chat ${sessionId} m${messageNumber}`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ id: sessionId, messages: [{ id: `m${messageNumber}`, role: "user", parts: [{ type: "text", text: `Where is order 100${messageNumber % 4}?` }] }] }),
  });
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"type":"finish"')) throw new Error(`chat ${sessionId} answered ${response.status}: ${text.slice(0, 300)}`);
  return 1;
}

async function takeSnapshot(server: Server, name: string): Promise<void> {
  if (snapshotFolder === undefined) return;
  mkdirSync(snapshotFolder, { recursive: true });
  const before = new Set(readdirSync(server.folder));
  process.kill(server.pid, "SIGUSR2");
  for (;;) {
    await sleep(500);
    const written = readdirSync(server.folder).find((file) => file.endsWith(".heapsnapshot") && !before.has(file));
    if (written !== undefined) {
      // Writing takes a while; wait until its size stops changing.
      let size = -1;
      for (;;) {
        const current = readFileSync(join(server.folder, written)).length;
        if (current === size && current > 0) break;
        size = current;
        await sleep(1000);
      }
      renameSync(join(server.folder, written), join(snapshotFolder, `${name}.heapsnapshot`));
      return;
    }
  }
}

interface Measurement {
  clients: number;
  turns: number;
  failures: number;
  startMiB: number;
  peakMiB: number;
  afterIdleMiB: number;
  /** The server's CPU milliseconds per completed turn during the load. */
  cpuMsPerTurn: number;
}

async function measure(clients: number, port: number): Promise<Measurement> {
  const server = await startServer(port);
  try {
    const sessionIds = Array.from({ length: clients }, (_, index) => `memory-${index}`);
    for (const sessionId of sessionIds) {
      const created = await fetchWithContext(`${server.origin}/api/sessions`, `create ${sessionId}`, { method: "POST", headers: json, body: JSON.stringify({ sessionId }) });
      if (created.status !== 201) throw new Error(`create ${sessionId}: ${created.status}`);
    }
    // One warm-up turn, so the start counts loaded code, not the first request's compilation.
    await chatOnce(server.origin, "memory-0", 0);
    await sleep(2000);
    await takeSnapshot(server, `${clients}-start`);
    const startBytes = residentBytes(server.pid);
    const startCpuSeconds = cpuSeconds(server.pid);
    let peakBytes = startBytes;
    const sampler = setInterval(() => { peakBytes = Math.max(peakBytes, residentBytes(server.pid)); }, 250);
    const deadline = Date.now() + loadMs;
    let turns = 0;
    const failures: string[] = [];
    let snapshotTaken = false;
    await Promise.all(sessionIds.map(async (sessionId) => {
      for (let messageNumber = 1; Date.now() < deadline; messageNumber += 1) {
        try {
          // Awaited first: `turns += await …` would add to the count read before the wait, losing the other clients' turns.
          const finished = await chatOnce(server.origin, sessionId, messageNumber);
          turns += finished;
        } catch (error) {
          // Counted and reported: a refused or reset request must not end the measurement.
          failures.push(error instanceof Error ? error.message : String(error));
        }
        if (!snapshotTaken && Date.now() > deadline - loadMs / 3) {
          snapshotTaken = true;
          await takeSnapshot(server, `${clients}-load`);
        }
      }
    }));
    clearInterval(sampler);
    const loadCpuSeconds = cpuSeconds(server.pid) - startCpuSeconds;
    peakBytes = Math.max(peakBytes, residentBytes(server.pid));
    await sleep(idleMs);
    const afterIdleBytes = residentBytes(server.pid);
    await takeSnapshot(server, `${clients}-idle`);
    if (failures.length > 0) {
      // Grouped by what went wrong, without the session and message that differ.
      const kinds = new Map<string, number>();
      for (const failure of failures) {
        const kind = failure.replace(/memory-\d+ m\d+/, "<session> <message>");
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
      console.error(`${failures.length} failed requests:\n${[...kinds].map(([kind, count]) => `  ${count} × ${kind.slice(0, 300)}`).join("\n")}`);
    }
    return { clients, turns, failures: failures.length, startMiB: mebibytes(startBytes), peakMiB: mebibytes(peakBytes), afterIdleMiB: mebibytes(afterIdleBytes), cpuMsPerTurn: Math.round((loadCpuSeconds * 1000) / Math.max(turns, 1)) };
  } catch (error) {
    console.error(`the server's output:\n${server.log().slice(-4000)}`);
    throw error;
  } finally {
    await server.stop();
  }
}

const port = Number(values.port);
const results: Measurement[] = [];
for (const clients of clientCounts) {
  const result = await measure(clients, port);
  results.push(result);
  console.log(JSON.stringify(result));
}
console.log(`| clients | turns started in the ${loadMs / 1000} s load | failed requests | RSS at start | peak RSS under load | RSS after ${idleMs / 1000} s idle | after idle vs start | server CPU ms per turn |`);
console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const result of results) {
  console.log(`| ${result.clients} | ${result.turns} | ${result.failures} | ${result.startMiB} MiB | ${result.peakMiB} MiB | ${result.afterIdleMiB} MiB | ${(((result.afterIdleMiB - result.startMiB) / result.startMiB) * 100).toFixed(0)} % | ${result.cpuMsPerTurn} |`);
}
