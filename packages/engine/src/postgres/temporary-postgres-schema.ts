/**
 * Private PostgreSQL schemas for tests. Shipped in `@perdure/engine/testing`,
 * so `pg` and the store load only when a schema is opened or dropped: the
 * testing entry works without `pg` installed.
 */
import { randomBytes } from "node:crypto";
import type { PostgresStore } from "./runtime/postgres-store.ts";
import type { PostgresStoreOptions } from "./runtime/postgres-store-options.ts";

/** Where tests find their PostgreSQL server: `PERDURE_TEST_DATABASE_URL`, else `PERDURE_DATABASE_URL`. */
export function testDatabaseUrl(): string | undefined {
  const url = process.env["PERDURE_TEST_DATABASE_URL"] ?? process.env["PERDURE_DATABASE_URL"];
  return url === undefined || url === "" ? undefined : url;
}

/** Why a PostgreSQL test cannot run here, for a skip reason or a CI failure. */
export const missingDatabaseMessage =
  "no PostgreSQL server: set PERDURE_TEST_DATABASE_URL (or PERDURE_DATABASE_URL) to a database URL; "
  + "`eval \"$(scripts/start-test-postgres.sh)\"` starts a private server and sets it";

/**
 * The `skip` option of a PostgreSQL test: skipped without a server on a
 * developer machine, run (and so failed) without one in CI, where `CI` is set.
 */
export function postgresTestSkip(url: string | undefined): string | false {
  const inCi = process.env["CI"] !== undefined && process.env["CI"] !== "";
  return url === undefined && !inCi ? missingDatabaseMessage : false;
}

/** The test server's URL, or an error saying how to get one (a PostgreSQL test run in CI without a server). */
export function requireTestDatabaseUrl(): string {
  const url = testDatabaseUrl();
  if (url === undefined) throw new Error(`this test cannot run in CI: ${missingDatabaseMessage}`);
  return url;
}

/** A private schema on the test server, dropped with everything in it by `dispose()`. */
export interface TemporaryPostgresSchema {
  connectionString: string;
  schema: string;
  /** Opens a store on the schema, as another process would; `dispose()` closes it. */
  open(overrides?: Partial<PostgresStoreOptions>): Promise<PostgresStore>;
  /**
   * Runs each query on one connection whose search path is the schema (so
   * queries name tables bare) and returns each query's rows under its key:
   * what a test compares between two runs.
   */
  rows<Key extends string>(queries: Record<Key, string>): Promise<Record<Key, Record<string, unknown>[]>>;
  dispose(): Promise<void>;
}

/**
 * Creates a uniquely named schema for one test, so tests share a server but
 * never each other's rows.
 *
 * @example
 * const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
 * after(() => temporary.dispose());
 * const store = await temporary.open();
 */
export function createTemporaryPostgresSchema(connectionString: string, options: Partial<PostgresStoreOptions> = {}): TemporaryPostgresSchema {
  const schema = `perdure_test_${randomBytes(6).toString("hex")}`;
  const opened: PostgresStore[] = [];
  return {
    connectionString,
    schema,
    async open(overrides = {}) {
      const { PostgresStore } = await import("./runtime/postgres-store.ts");
      const store = await PostgresStore.open({ poolSize: 4, ...options, ...overrides, connectionString, schema });
      opened.push(store);
      return store;
    },
    async rows(queries) {
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString });
      await client.connect();
      try {
        await client.query(`SET search_path TO ${pg.escapeIdentifier(schema)}`);
        const result = {} as Record<keyof typeof queries, Record<string, unknown>[]>;
        for (const [key, query] of Object.entries(queries) as [keyof typeof queries, string][]) {
          result[key] = (await client.query<Record<string, unknown>>(query)).rows;
        }
        return result;
      } finally {
        await client.end();
      }
    },
    async dispose() {
      for (const store of opened) await store.close();
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
