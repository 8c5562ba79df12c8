import type { Store } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import { parseEngineAddress } from "./engine-address.ts";

/**
 * Opens a new store connection to the engine at `address` (see
 * {@link PrivateEngine.address}). A SQLite address opens a `SqliteStore` with
 * `process-crash-safe` durability (survives a killed process, skips fsync) and
 * a 20 ms poll for work from other processes, so tests stay fast. Close it
 * when done. Throws `InvalidInputError` naming the address when it is not
 * `sqlite:<absolute path>`.
 *
 * @example
 * const store = openStoreAtAddress(process.env.PERDURE_ENGINE_ADDRESS!);
 * const client = new Client({ store });
 * // ...
 * await store.close();
 */
export function openStoreAtAddress(address: string): Store {
  const parsed = parseEngineAddress(address);
  switch (parsed.kind) {
    case "sqlite":
      return SqliteStore.open({ path: parsed.databasePath, durability: "process-crash-safe", pollIntervalMs: 20 });
    // PostgreSQL: add a case here when the PostgreSQL store lands.
  }
}
