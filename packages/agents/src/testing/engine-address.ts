import { isAbsolute } from "node:path";
import { InvalidInputError } from "@perdure/engine";

/** The scheme of an engine address that names a SQLite database file. */
const sqliteScheme = "sqlite:";

/**
 * Where a test engine lives, parsed from its address string. Only SQLite
 * exists today; a PostgreSQL variant (`postgres://…`, one schema per private
 * engine) joins this union when the PostgreSQL store lands.
 */
export type EngineAddress = { kind: "sqlite"; databasePath: string };

/**
 * The address of a SQLite database file: `sqlite:<absolute path>`.
 *
 * @example
 * const address = formatSqliteEngineAddress("/tmp/perdure-agents-test-x/engine.db");
 * // "sqlite:/tmp/perdure-agents-test-x/engine.db"
 */
export function formatSqliteEngineAddress(databasePath: string): string {
  return `${sqliteScheme}${databasePath}`;
}

/**
 * Parses an engine address such as `sqlite:/tmp/x/engine.db`; throws
 * `InvalidInputError` naming the address for anything else.
 *
 * @example
 * const parsed = parseEngineAddress(privateEngine.address);
 * if (parsed.kind === "sqlite") console.log(parsed.databasePath);
 */
export function parseEngineAddress(address: string): EngineAddress {
  if (typeof address === "string" && address.startsWith(sqliteScheme)) {
    const databasePath = address.slice(sqliteScheme.length);
    if (!isAbsolute(databasePath)) {
      throw new InvalidInputError(`engine address ${JSON.stringify(address)} is invalid: the SQLite path must be absolute, as in sqlite:/tmp/perdure/engine.db, so every process opens the same file`);
    }
    return { kind: "sqlite", databasePath };
  }
  if (typeof address === "string" && /^postgres(ql)?:\/\//.test(address)) {
    throw new InvalidInputError(`engine address ${JSON.stringify(address)} is not supported yet: PostgreSQL test engines are not implemented; use sqlite:<absolute path>`);
  }
  throw new InvalidInputError(`engine address ${JSON.stringify(address)} is invalid: use sqlite:<absolute path to the database file>, such as PrivateEngine's address`);
}
