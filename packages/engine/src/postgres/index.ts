/**
 * `@perdure/engine/postgres`: the distributed store on PostgreSQL 15+ through
 * `pg` (install it next to the engine: `npm install pg`).
 *
 * @example
 * import { Client, Worker } from "@perdure/engine";
 * import { PostgresStore } from "@perdure/engine/postgres";
 * const store = await PostgresStore.open({ connectionString: process.env.PERDURE_DATABASE_URL! });
 * await new Worker({ store, flows: [orderFlow] }).start();
 * await new Client({ store }).start(orderFlow, "order-7", { amount: 12 });
 */
export { PostgresStore } from "./runtime/postgres-store.ts";
export type { PostgresStoreOptions, SingleAttemptClaimCommit } from "./runtime/postgres-store-options.ts";
