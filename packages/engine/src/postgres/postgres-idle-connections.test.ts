import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import pg from "pg";
import { pollUntil } from "../testing/poll-until.ts";
import type { PostgresStore } from "./runtime/postgres-store.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

/** Server sessions of one application name: the store's pooled connections plus its LISTEN connection. */
async function sessionsOf(connectionString: string, applicationName: string): Promise<number> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const result = await client.query<{ count: string }>("SELECT count(*) AS count FROM pg_stat_activity WHERE application_name = $1", [applicationName]);
    return Number(result.rows[0]?.count ?? 0);
  } finally {
    await client.end();
  }
}

/** Runs `poolSize` transactions at once, each holding its connection until all have one, so the pool opens every connection. */
async function openEveryConnection(store: PostgresStore, poolSize: number): Promise<void> {
  let arrived = 0;
  let release: () => void = () => undefined;
  const allArrived = new Promise<void>((resolve) => {
    release = resolve;
  });
  await Promise.all(Array.from({ length: poolSize }, () => store.transaction(async (transaction) => {
    await transaction.lockFlow("no-such-flow");
    arrived += 1;
    if (arrived === poolSize) release();
    await allArrived;
  })));
}

void test("the pool keeps idle connections warm by default and closes them after idleConnectionTimeoutMs", { skip }, async (t) => {
  const connectionString = requireTestDatabaseUrl();
  const temporary = createTemporaryPostgresSchema(connectionString);
  t.after(() => temporary.dispose());
  const suffix = randomBytes(4).toString("hex");
  const poolSize = 3;
  const warm = await temporary.open({ poolSize, applicationName: `perdure-warm-${suffix}` });
  const brief = await temporary.open({ poolSize, idleConnectionTimeoutMs: 100, applicationName: `perdure-brief-${suffix}` });
  await openEveryConnection(warm, poolSize);
  await openEveryConnection(brief, poolSize);
  // The brief pool gives its connections back; only its LISTEN connection stays.
  await pollUntil(async () => (await sessionsOf(connectionString, `perdure-brief-${suffix}`)) === 1, { description: "the brief pool's idle connections to close" });
  // Well past the brief timeout, the default pool still holds every connection it opened.
  assert.equal(await sessionsOf(connectionString, `perdure-warm-${suffix}`), poolSize + 1);
});
