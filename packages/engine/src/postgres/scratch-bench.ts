import { Client, Worker, completeFlow, defineFlow, defineStep, moveTo } from "../index.ts";
import { PostgresStore } from "./postgres-store.ts";
import { createTemporaryPostgresSchema } from "./temporary-postgres-schema.ts";

const url = process.env["PERDURE_TEST_DATABASE_URL"]!;
const temporary = createTemporaryPostgresSchema(url);
const store: PostgresStore = await temporary.open({ poolSize: 10 });
let resolveDone: () => void = () => undefined;
const Noop = defineStep<{ remaining: number }>("Noop", {
  execute: (_context, input) => {
    if (input.remaining > 0) return moveTo("Noop", { remaining: input.remaining - 1 });
    resolveDone();
    return completeFlow();
  },
});
const flow = defineFlow({ type: "NoopChain", start: "Noop", steps: [Noop] });
const worker = new Worker({ store, flows: [flow], onError: (error) => console.error(error) });
await worker.start();
const client = new Client({ store });
for (const [name, steps] of [["warm", 300], ["run1", 2000], ["run2", 2000]] as const) {
  const done = new Promise<void>((resolve) => { resolveDone = resolve; });
  const started = performance.now();
  const cpu = process.cpuUsage();
  await client.start(flow, name, { remaining: steps - 1 });
  await done;
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  console.log(`${name}: ${(elapsed / steps).toFixed(3)} ms/Step, cpu ${((used.user + used.system) / 1000 / steps).toFixed(3)} ms/Step`);
}
await worker.close();
await temporary.dispose();
