/**
 * Per-request overhead of the session HTTP API (`@perdure/agents/http`) in
 * this process, without a network: `GET /api/health` (guard and route table
 * only) and `GET /api/sessions/:id/snapshot` (plus `authorize`, the owner
 * check and one snapshot RPC on a real SQLite file), called as the plain
 * Fetch handler and mounted in a Hono app. Rounds alternate between the two
 * mounts so that load on the machine hits both alike.
 *
 *   node bench/http/run.ts [--requests=2000] [--rounds=5]
 */
import { Client } from "@perdure/engine";
import { createTemporarySqliteStore } from "@perdure/engine/testing";
import { createAgentHttpHandler } from "@perdure/agents/http";
import { createStepwiseAgentSessionFlow, ScriptedModelClient } from "@perdure/agents/stepwise";
import { Hono } from "hono";
import { Worker } from "@perdure/engine";

function argument(name: string, fallback: number): number {
  const match = process.argv.find((value) => value.startsWith(`--${name}=`));
  return match === undefined ? fallback : Number(match.slice(name.length + 3));
}

const requests = argument("requests", 2000);
const rounds = argument("rounds", 5);

const temporary = createTemporarySqliteStore();
const flow = createStepwiseAgentSessionFlow({ name: "bench", instructions: "Answer.", model: new ScriptedModelClient(() => ({ text: "ok" })) }, "HttpBenchAgent");
const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
await worker.start();
const client = new Client({ store: temporary.store });
const handler = createAgentHttpHandler({
  client,
  flows: [flow],
  basePath: "/api",
  allowedHosts: ["app.test"],
  authorize: ({ request }) => (request.headers.get("authorization") === "Bearer bench" ? { principal: "bench-user" } : Response.json({ error: "no" }, { status: 401 })),
});
const app = new Hono();
app.all("/api/*", (context) => handler(context.req.raw));
const mounts: Record<string, (request: Request) => Promise<Response>> = { plain: handler, hono: async (request) => app.fetch(request) };

const headers = { authorization: "Bearer bench", "content-type": "application/json" };
const created = await handler(new Request("http://app.test/api/sessions", { method: "POST", headers, body: JSON.stringify({ sessionId: "bench-1" }) }));
if (created.status !== 201) throw new Error(`create answered ${created.status}`);
const sent = await handler(new Request("http://app.test/api/chat", { method: "POST", headers, body: JSON.stringify({ id: "bench-1", messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "hello" }] }] }) }));
await sent.text();

async function measure(mount: (request: Request) => Promise<Response>, path: string): Promise<number> {
  const started = process.hrtime.bigint();
  for (let index = 0; index < requests; index += 1) {
    const response = await mount(new Request(`http://app.test${path}`, { headers }));
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
    await response.arrayBuffer();
  }
  return Number(process.hrtime.bigint() - started) / 1000 / requests;
}

const routes = { health: "/api/health", snapshot: "/api/sessions/bench-1/snapshot" };
const samples: Record<string, number[]> = {};
// One warm-up round, not recorded.
for (const mount of Object.values(mounts)) for (const path of Object.values(routes)) await measure(mount, path);
for (let round = 0; round < rounds; round += 1) {
  for (const [routeName, path] of Object.entries(routes)) {
    for (const [mountName, mount] of Object.entries(mounts)) {
      (samples[`${routeName} ${mountName}`] ??= []).push(await measure(mount, path));
    }
  }
}
const median = (values: number[]): number => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)] ?? Number.NaN;
console.log(`${requests} requests per sample, ${rounds} rounds, Node ${process.version}`);
console.log("route     mount   median µs/request   min µs/request   samples");
for (const [name, values] of Object.entries(samples)) {
  const [routeName, mountName] = name.split(" ");
  console.log(`${(routeName ?? "").padEnd(9)} ${(mountName ?? "").padEnd(7)} ${median(values).toFixed(1).padStart(10)}          ${Math.min(...values).toFixed(1).padStart(10)}       ${values.map((value) => value.toFixed(1)).join(", ")}`);
}
for (const routeName of Object.keys(routes)) {
  const plain = median(samples[`${routeName} plain`] ?? []);
  const hono = median(samples[`${routeName} hono`] ?? []);
  const plainMin = Math.min(...(samples[`${routeName} plain`] ?? []));
  const honoMin = Math.min(...(samples[`${routeName} hono`] ?? []));
  console.log(`${routeName}: Hono adds ${(hono - plain).toFixed(1)} µs by the medians (${((hono / plain - 1) * 100).toFixed(0)}%), ${(honoMin - plainMin).toFixed(1)} µs by the minimums`);
}
await worker.close();
await temporary.dispose();
