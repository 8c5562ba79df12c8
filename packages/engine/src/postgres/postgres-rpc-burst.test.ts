/**
 * A burst of RPCs far larger than the pool, through one PostgresStore, all
 * at once: every one completes (they wait for a connection in order rather
 * than failing with pg-pool's "timeout exceeded when trying to connect"),
 * and none is lost. Issue 40 saw 9,990 concurrent `resolveInterrupt` calls
 * crash a Client this way.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { attribute } from "../attribute/attribute.ts";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { rpc } from "../rpc/rpc.ts";
import { completeFlow } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const count = attribute<number>("count");
const Idle = defineStep("Idle", { execute: () => completeFlow() });
const flow = defineFlow({
  type: "RpcBurst",
  steps: [Idle],
  persistence: { count },
  rpcs: {
    bump: rpc({
      name: "bump",
      handler: async (context) => {
        await context.write(count, ((await context.read(count)) ?? 0) + 1);
        return null;
      },
    }),
  },
});

describe("a burst of RPCs through one PostgresStore", { skip: postgresTestSkip(testDatabaseUrl()) }, () => {
  const schema = createTemporaryPostgresSchema(testDatabaseUrl() ?? "");
  after(() => schema.dispose());

  it("completes every RPC of a burst many times the pool's size, in turn, with nothing lost", async () => {
    requireTestDatabaseUrl();
    // Two connections and a one-second connect timeout: the burst waits far longer than that in all.
    const store = await schema.open({ poolSize: 2, connectTimeoutMs: 1_000 });
    const client = new Client({ store });
    const flows = 20;
    const perFlow = 30;
    for (let index = 0; index < flows; index += 1) await client.start(flow, `burst-${index}`);
    const started = Date.now();
    const results = await Promise.allSettled(Array.from({ length: flows * perFlow }, (_, index) => client.invokeRPC(flow.bump, `burst-${index % flows}`)));
    const failures = results.filter((result) => result.status === "rejected");
    assert.deepEqual(failures.slice(0, 3), [], `${failures.length} of ${results.length} RPCs failed`);
    // The burst did outlast the connect timeout, so the pool alone would have failed some.
    console.log(`${results.length} RPCs in ${Date.now() - started} ms`);
    for (let index = 0; index < flows; index += 1) assert.deepEqual(await client.getAttributes(`burst-${index}`, count), [perFlow]);
  });
});
