/**
 * A process that opens a store transaction, locks one Flow's row, says
 * `locked` on stdout and then never finishes the transaction, as a process
 * stopped mid-transaction would. The test SIGSTOPs it as well.
 */
import { PostgresStore } from "../runtime/postgres-store.ts";

const [connectionString, schema, flowId] = process.argv.slice(2);
if (connectionString === undefined || schema === undefined || flowId === undefined) throw new Error("usage: frozen-transaction-main.ts <url> <schema> <flowId>");
const store = await PostgresStore.open({ connectionString, schema, migrate: false, onError: () => undefined });
await store.transaction(async (transaction) => {
  await transaction.lockFlow(flowId);
  process.stdout.write("locked\n");
  await new Promise(() => undefined);
}).catch(() => undefined);
