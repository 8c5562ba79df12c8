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
    // The PostgreSQL store is optional; load it only when asked for.
    const postgres = (await import("@perdure/engine/postgres" as string)) as { PostgresStore: { open(options: { connectionString: string }): Promise<Store> | Store } };
    const store = await postgres.PostgresStore.open({ connectionString: url });
    return { store, description: `PostgreSQL at ${url.replace(/\/\/[^@/]*@/, "//***@")}` };
  }
  const store = SqliteStore.open({ path: location.databasePath, durability: "process-crash-safe" });
  return { store, description: `SQLite at ${location.databasePath}` };
}
