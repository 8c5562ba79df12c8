import { InvalidInputError, type Store } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";

/** Where the CLI keeps its data: a SQLite file, or PostgreSQL when `PERDURE_DATABASE_URL` is set. */
export interface StoreLocation {
  /** `--db`, the SQLite file. */
  databasePath: string;
  /** `PERDURE_DATABASE_URL`, which wins over the file when set. */
  databaseUrl: string | undefined;
}

/** Opens the configured store and says which it is, for the startup banner. */
export async function openConfiguredStore(location: StoreLocation): Promise<{ store: Store; description: string }> {
  const url = location.databaseUrl;
  if (url !== undefined && url !== "") {
    if (!/^postgres(ql)?:\/\//.test(url)) {
      throw new InvalidInputError(`PERDURE_DATABASE_URL ${JSON.stringify(url)} is not a postgres:// URL`);
    }
    // The PostgreSQL store (and `pg`) load only when asked for.
    const { PostgresStore } = await import("@perdure/engine/postgres");
    const store = await PostgresStore.open({ connectionString: url });
    return { store, description: `PostgreSQL at ${url.replace(/\/\/[^@/]*@/, "//***@")}` };
  }
  const store = SqliteStore.open({ path: location.databasePath, durability: "process-crash-safe" });
  return { store, description: `SQLite at ${location.databasePath}` };
}

/** Applies the PostgreSQL store's migrations to `PERDURE_DATABASE_URL`; returns the names applied now. */
export async function migrateConfiguredStore(location: StoreLocation): Promise<string[]> {
  const url = location.databaseUrl;
  if (url === undefined || url === "") {
    throw new InvalidInputError("perdure migrate needs PERDURE_DATABASE_URL=postgres://...; the SQLite store creates its schema when opened");
  }
  const { PostgresStore } = await import("@perdure/engine/postgres");
  return PostgresStore.migrate({ connectionString: url });
}
