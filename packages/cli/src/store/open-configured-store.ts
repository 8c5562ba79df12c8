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
  /** The SQLite store's durability (`perdure worker` takes `full`). @default "process-crash-safe" */
  sqliteDurability?: "full" | "process-crash-safe";
}

/**
 * Splits `PERDURE_DATABASE_URL` into what `pg` connects to and the engine's
 * schema, given as `?schema=` (default `perdure`). A URL with several hosts
 * is refused: `pg` connects to one, so a standby is reached through a proxy
 * or virtual IP (see docs/postgres.md).
 */
export function postgresLocationOf(url: string): { connectionString: string; schema: string | undefined } {
  const authority = /^postgres(?:ql)?:\/\/(?:[^@/?#]*@)?([^/?#]*)/.exec(url)?.[1] ?? "";
  if (authority.includes(",")) {
    throw new InvalidInputError(`PERDURE_DATABASE_URL names several hosts (${authority}); the PostgreSQL driver connects to one: put a TCP proxy or a virtual IP that follows the primary in front of them and name that (see docs/postgres.md)`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new InvalidInputError(`PERDURE_DATABASE_URL is not a valid URL (${hostAndPortOf(url)}): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const schemas = parsed.searchParams.getAll("schema");
  if (schemas.length > 1) throw new InvalidInputError(`PERDURE_DATABASE_URL gives ?schema= ${schemas.length} times; give it once`);
  parsed.searchParams.delete("schema");
  return { connectionString: parsed.toString(), schema: schemas[0] };
}

/** Opens the configured store and says which it is, for the startup banner. */
export async function openConfiguredStore(location: StoreLocation, options: OpenConfiguredStoreOptions = {}): Promise<{ store: Store; description: string }> {
  const url = location.databaseUrl;
  if (url !== undefined && url !== "") {
    if (!/^postgres(ql)?:\/\//.test(url)) {
      throw new InvalidInputError(`PERDURE_DATABASE_URL ${JSON.stringify(url)} is not a postgres:// URL`);
    }
    const { connectionString, schema } = postgresLocationOf(url);
    const { PostgresStore } = await importPostgresStore();
    let store: Store;
    try {
      store = await PostgresStore.open({ connectionString, ...(schema === undefined ? {} : { schema }) });
    } catch (error) {
      if (InvalidInputError.isInstance(error)) throw error;
      const reason = error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : String(error);
      throw new Error(`PERDURE_DATABASE_URL: cannot open PostgreSQL at ${hostAndPortOf(url)} (${reason}); start the server or fix the variable`, { cause: error });
    }
    return { store, description: `PostgreSQL at ${url.replace(/\/\/[^@/]*@/, "//***@")}` };
  }
  if (options.mustExist === true && !existsSync(location.databasePath)) {
    throw new InvalidInputError(`no store at ${location.databasePath}: pass --db with the file perdure dev uses (default .perdure/dev.db), or set PERDURE_DATABASE_URL`);
  }
  const store = SqliteStore.open({ path: location.databasePath, durability: options.sqliteDurability ?? "process-crash-safe" });
  return { store, description: `SQLite at ${location.databasePath}` };
}

/** Applies the PostgreSQL store's migrations to `PERDURE_DATABASE_URL`; returns the names applied now. */
export async function migrateConfiguredStore(location: StoreLocation): Promise<string[]> {
  const url = location.databaseUrl;
  if (url === undefined || url === "") {
    throw new InvalidInputError("perdure migrate needs PERDURE_DATABASE_URL=postgres://...; the SQLite store creates its schema when opened");
  }
  const { connectionString, schema } = postgresLocationOf(url);
  const { PostgresStore } = await importPostgresStore();
  return PostgresStore.migrate({ connectionString, ...(schema === undefined ? {} : { schema }) });
}
