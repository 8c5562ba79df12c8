/** Every row of a SQLite store, to prove that a request changed nothing (the engine's testing helper). */
export { assertSqliteStoreUnchanged as assertStoreUnchanged, snapshotSqliteStore as storeSnapshot } from "@perdure/engine/testing";
export type { SqliteStoreSnapshot as StoreSnapshot } from "@perdure/engine/testing";
