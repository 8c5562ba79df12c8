import { existsSync } from "node:fs";
import { InvalidInputError, type Store } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";

/** Where the CLI keeps its data: a SQLite file, or PostgreSQL when `PERDURE_DATABASE_URL` is set. */
export interface StoreLocation {
  /** `--db`, the SQLite file. */
  databasePath: string;
  /** `PERDURE_DATABASE_URL`, which wins over the file when set. */
  databaseUrl: string | undefined;
}

/** Where a PostgreSQL URL points, for messages: `host:port`, without credentials. */
function hostAndPortOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || "localhost"}:${parsed.port || "5432"}`;
  } catch {
    return "an unparsable address";
  }
}

/**
 * Loads the PostgreSQL store, and `pg` with it, only when asked for. `pg` is
 * an optional peer of `@perdure/engine`: without it the error says how to
 * install it instead of naming a module deep in the engine.
 */
export async function importPostgresStore(importModule: () => Promise<typeof import("@perdure/engine/postgres")> = () => import("@perdure/engine/postgres")): Promise<typeof import("@perdure/engine/postgres")> {
  try {
    return await importModule();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if ((code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && /['"]pg['"]/.test((error as Error).message)) {
      throw new InvalidInputError("PERDURE_DATABASE_URL selects PostgreSQL, which needs the pg package: run npm install pg", { cause: error });
    }
    throw error;
  }
}

/** Options of {@link openConfiguredStore}. */
export interface OpenConfiguredStoreOptions {
  /** Refuse a SQLite file that does not exist instead of creating it (commands that only read). @default false */
  mustExist?: boolean;
}

/** Opens the configured store and says which it is, for the startup banner. */
export async function openConfiguredStore(location: StoreLocation, options: OpenConfiguredStoreOptions = {}): Promise<{ store: Store; description: string }> {
  const url = location.databaseUrl;
  if (url !== undefined && url !== "") {
    if (!/^postgres(ql)?:\/\//.test(url)) {
      throw new InvalidInputError(`PERDURE_DATABASE_URL ${JSON.stringify(url)} is not a postgres:// URL`);
    }
    const { PostgresStore } = await importPostgresStore();
    let store: Store;
    try {
      store = await PostgresStore.open({ connectionString: url });
    } catch (error) {
      const reason = error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : String(error);
      throw new Error(`PERDURE_DATABASE_URL: cannot open PostgreSQL at ${hostAndPortOf(url)} (${reason}); start the server or fix the variable`, { cause: error });
    }
    return { store, description: `PostgreSQL at ${url.replace(/\/\/[^@/]*@/, "//***@")}` };
  }
  if (options.mustExist === true && !existsSync(location.databasePath)) {
    throw new InvalidInputError(`no store at ${location.databasePath}: pass --db with the file perdure dev uses (default .perdure/dev.db), or set PERDURE_DATABASE_URL`);
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
  const { PostgresStore } = await importPostgresStore();
  return PostgresStore.migrate({ connectionString: url });
}
