import { randomBytes } from "node:crypto";
import { PostgresStore, type PostgresStoreOptions } from "@perdure/engine/postgres";
import pg from "pg";
import type { ScenarioResult } from "../support.ts";

/** The server the PostgreSQL scenarios use: `PERDURE_BENCH_DATABASE_URL`, else `PERDURE_TEST_DATABASE_URL`. */
export function benchDatabaseUrl(): string | undefined {
  const url = process.env["PERDURE_BENCH_DATABASE_URL"] ?? process.env["PERDURE_TEST_DATABASE_URL"];
  return url === undefined || url === "" ? undefined : url;
}

export const skippedMessage = "skipped: no PostgreSQL server; set PERDURE_BENCH_DATABASE_URL (or PERDURE_TEST_DATABASE_URL), e.g. with `eval \"$(bash scripts/start-test-postgres.sh)\"`";

/** What a PostgreSQL scenario returns without a server: no rows, and the reason in the JSON. */
export function skippedResult(scenario: string): ScenarioResult {
  console.log(`\n  ${scenario}: ${skippedMessage}`);
  return { measurements: [], details: { skipped: skippedMessage } };
}

/** A fresh schema for one scenario, dropped with everything in it by `dispose()`. */
export interface BenchmarkPostgresSchema {
  connectionString: string;
  schema: string;
  open(overrides?: Partial<PostgresStoreOptions>): Promise<PostgresStore>;
  /** One value of a server setting, such as `synchronous_commit`. */
  setting(name: string): Promise<string>;
  dispose(): Promise<void>;
}

export function createBenchmarkPostgresSchema(connectionString: string): BenchmarkPostgresSchema {
  const schema = `perdure_bench_${randomBytes(6).toString("hex")}`;
  const opened: PostgresStore[] = [];
  const withClient = async <TResult>(work: (client: pg.Client) => Promise<TResult>): Promise<TResult> => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  return {
    connectionString,
    schema,
    async open(overrides = {}) {
      const store = await PostgresStore.open({ ...overrides, connectionString, schema });
      opened.push(store);
      return store;
    },
    setting: (name) => withClient(async (client) => {
      const result = await client.query<{ setting: string }>("SELECT setting FROM pg_settings WHERE name = $1", [name]);
      return result.rows[0]?.setting ?? "unknown";
    }),
    async dispose() {
      for (const store of opened) await store.close();
      await withClient((client) => client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`));
    },
  };
}

/** Median time of a raw `INSERT` + `COMMIT` round trip on one connection: the floor a durable Step pays. */
export async function measureRawCommitMs(connectionString: string, schema: string, commits: number): Promise<number> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  const table = `${pg.escapeIdentifier(schema)}.raw_commit_probe`;
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schema)}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${table} (id bigint PRIMARY KEY, payload text NOT NULL)`);
    const times: number[] = [];
    for (let index = 0; index < commits; index++) {
      const startedAt = performance.now();
      await client.query("BEGIN");
      await client.query(`INSERT INTO ${table} (id, payload) VALUES ($1, $2)`, [index, "x".repeat(100)]);
      await client.query("COMMIT");
      times.push(performance.now() - startedAt);
    }
    times.sort((left, right) => left - right);
    return times[Math.floor(times.length / 2)] ?? Number.NaN;
  } finally {
    await client.query(`DROP TABLE IF EXISTS ${table}`);
    await client.end();
  }
}
