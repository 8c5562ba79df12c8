/**
 * Measures what confirming a single-attempt claim costs (`PostgresStore`
 * option `singleAttemptClaimCommit`): a primary and a streaming standby on
 * loopback (the standby in `synchronous_standby_names`, the default
 * `synchronous_commit = local`), one store per level, interleaved rounds.
 * Prints per confirmation: statements and round trips (one each), WAL bytes,
 * and latency (median, p90) at `on` and `remote_write` with the standby, next
 * to one plain read statement and one write committed at `local`; then, at `on`, on the test server of
 * `PERDURE_TEST_DATABASE_URL`, which has no standby.
 *
 *   node --conditions=perdure-source packages/cli/src/failover/measure-claim-confirmation.ts [rounds]
 */
import { loadavg } from "node:os";
import { Client, defineFlow, defineStep, completeFlow } from "@perdure/engine";
import { PostgresStore } from "@perdure/engine/postgres";
import { createTemporaryPostgresSchema, testDatabaseUrl } from "@perdure/engine/testing";
import { ReplicatedPostgres } from "../test-fixtures/replicated-postgres.ts";

const rounds = Number(process.argv[2] ?? "200");
const flow = defineFlow({ type: "ConfirmCost", start: "Hold", steps: [defineStep("Hold", { execute: () => completeFlow() })] });

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return `median ${at(0.5).toFixed(3)} ms, p90 ${at(0.9).toFixed(3)} ms (n=${sorted.length})`;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** Starts a Flow and leases its first execution to a made-up Worker, as a claim would: a lease to confirm. */
async function leasedFlow(store: PostgresStore): Promise<{ flowId: string; executionId: string; workerId: string; leaseToken: number }> {
  await new Client({ store }).start(flow, "confirm-cost", {});
  const leaseToken = await store.transaction(async (transaction) => {
    await transaction.lockFlow("confirm-cost");
    await transaction.updateExecution("confirm-cost", "1", { claimedBy: "measuring" });
    return (await transaction.getExecution("confirm-cost", "1"))?.leaseToken ?? 0;
  });
  return { flowId: "confirm-cost", executionId: "1", workerId: "measuring", leaseToken };
}

const cluster = await ReplicatedPostgres.start({ synchronous: false, namedStandby: true });
const stores: PostgresStore[] = [];
try {
  const url = cluster.url(cluster.primaryPort);
  const open = async (level: "on" | "remote_write"): Promise<PostgresStore> => {
    const store = await PostgresStore.open({ connectionString: url, singleAttemptClaimCommit: level, poolSize: 2, onError: () => undefined });
    stores.push(store);
    return store;
  };
  const on = await open("on");
  const remoteWrite = await open("remote_write");
  const lease = await leasedFlow(on);
  const confirm = (store: PostgresStore, held = lease) => () => store.confirmClaim?.(held) ?? Promise.reject(new Error("no confirmClaim"));
  const read = () => on.oneRequest?.readFlow("confirm-cost") ?? Promise.reject(new Error("no one-request reads"));
  // A write that commits at the default (local): a heartbeat of the same lease, one statement.
  const heartbeat = () => on.oneRequest?.heartbeat({ ...lease, now: on.clock.now(), heartbeatTimeoutMs: null, checkpoint: null }) ?? Promise.reject(new Error("no heartbeats"));
  const lsn = async (): Promise<bigint> => BigInt(await cluster.query(cluster.primaryPort, "SELECT pg_current_wal_lsn() - '0/0'"));
  // Warm the connections and the prepared statements.
  for (let index = 0; index < 20; index += 1) for (const work of [confirm(on), confirm(remoteWrite), read, heartbeat]) await work();
  if (await confirm(on)() !== true) throw new Error("the measured lease is not held");

  const load = loadavg()[0]?.toFixed(1);
  const samples = { on: [] as number[], remoteWrite: [] as number[], read: [] as number[], heartbeat: [] as number[] };
  const sides = [["on", confirm(on)], ["remoteWrite", confirm(remoteWrite)], ["read", read], ["heartbeat", heartbeat]] as const;
  const walBefore = await lsn();
  for (let round = 0; round < rounds; round += 1) {
    // Rotate the order each round.
    for (let index = 0; index < sides.length; index += 1) {
      const [name, work] = sides[(round + index) % sides.length] ?? sides[0];
      samples[name].push(await timed(work));
    }
  }
  const walPerRound = Number(await lsn() - walBefore) / rounds;
  const walBeforeConfirmations = await lsn();
  for (let index = 0; index < 100; index += 1) await confirm(on)();
  const walPerConfirmation = Number(await lsn() - walBeforeConfirmations) / 100;
  console.log(`standby in synchronous_standby_names, default synchronous_commit local; load average ${load} before, ${loadavg()[0]?.toFixed(1)} after`);
  console.log(`  confirmation at on:           ${summary(samples.on)}`);
  console.log(`  confirmation at remote_write: ${summary(samples.remoteWrite)}`);
  console.log(`  one plain read statement:     ${summary(samples.read)}`);
  console.log(`  one heartbeat (a write committed at local): ${summary(samples.heartbeat)}`);
  console.log(`  WAL per round (two confirmations, a heartbeat, a read): ${walPerRound.toFixed(0)} bytes; per confirmation alone: ${walPerConfirmation.toFixed(0)} bytes`);

  // No standby at all: the test server of PERDURE_TEST_DATABASE_URL, where PostgreSQL waits for none.
  const testUrl = testDatabaseUrl();
  if (testUrl !== undefined) {
    const temporary = createTemporaryPostgresSchema(testUrl);
    try {
      const alone = await temporary.open({ singleAttemptClaimCommit: "on", poolSize: 2 });
      const aloneLease = await leasedFlow(alone);
      const readAlone = () => alone.oneRequest?.readFlow("confirm-cost") ?? Promise.reject(new Error("no one-request reads"));
      for (let index = 0; index < 20; index += 1) for (const work of [confirm(alone, aloneLease), readAlone]) await work();
      const samplesAlone = { on: [] as number[], read: [] as number[] };
      for (let round = 0; round < rounds; round += 1) {
        if (round % 2 === 0) {
          samplesAlone.on.push(await timed(confirm(alone, aloneLease)));
          samplesAlone.read.push(await timed(readAlone));
        } else {
          samplesAlone.read.push(await timed(readAlone));
          samplesAlone.on.push(await timed(confirm(alone, aloneLease)));
        }
      }
      console.log(`no standby (the test server); load average ${loadavg()[0]?.toFixed(1)}`);
      console.log(`  confirmation at on:           ${summary(samplesAlone.on)}`);
      console.log(`  one plain read statement:     ${summary(samplesAlone.read)}`);
    } finally {
      await temporary.dispose();
    }
  }
} finally {
  for (const store of stores) await store.close();
  await cluster.dispose();
}
