/**
 * `@perdure/engine/sqlite`: the embedded store on Node's built-in `node:sqlite`.
 *
 * @example
 * import { SqliteStore } from "@perdure/engine/sqlite";
 * const store = SqliteStore.open({ path: ".perdure/app.db", durability: "full" });
 */
export { SqliteStore } from "./sqlite-store.ts";
export type { SqliteDurability, SqliteStoreOptions } from "./sqlite-store.ts";
