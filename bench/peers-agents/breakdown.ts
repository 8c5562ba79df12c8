/**
 * Where a PostgreSQL agent turn's statements go: runs 20 turns of the
 * bench's session (see perdure-agent.ts) and counts, per turn, the store
 * transactions by the engine function that opened them and the statements
 * by their SQL's first words. For finding what to cut, not for timing.
 *
 *   node bench/peers-agents/breakdown.ts      # needs PERDURE_BENCH_DATABASE_URL or PERDURE_TEST_DATABASE_URL
 */
import pg from "pg";
import { benchDatabaseUrl, skippedMessage } from "../engine/scenarios/postgres-support.ts";
import { openPerdureAgentPostgres } from "./perdure-agent.ts";
import { timeOneSession } from "./turn-workload.ts";

const url = benchDatabaseUrl();
if (url === undefined) {
  console.log(skippedMessage);
  process.exit(0);
}
const system = await openPerdureAgentPostgres(url, 4);
const statements = new Map<string, number>();
const transactions = new Map<string, number>();
let counting = false;
const clientPrototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const originalQuery = clientPrototype.query;
clientPrototype.query = function countedQuery(this: unknown, ...args: unknown[]): unknown {
  if (counting) {
    const first = args[0];
    const given = typeof first === "string" ? first : (first as { text?: unknown }).text;
    const text = typeof given === "string" ? given : "";
    const label = text.replace(/\s+/g, " ").replace(/"[^"]*"\./g, "").trim().slice(0, 70);
    statements.set(label, (statements.get(label) ?? 0) + 1);
  }
  return originalQuery.apply(this, args);
};
/** The first engine function on the stack outside the store: who opened the transaction. */
function caller(): string {
  const lines = (new Error().stack ?? "").split("\n").slice(3);
  const frame = lines.find((line) => !line.includes("postgres-store") && !line.includes("breakdown.ts")) ?? "";
  return /at (?:async )?([^\s(]+)/.exec(frame)?.[1] ?? frame.trim();
}
const store = system.store as unknown as Record<string, (...args: unknown[]) => unknown>;
for (const method of ["transaction", "read"] as const) {
  const original = store[method]!.bind(store);
  store[method] = (...args: unknown[]) => {
    if (counting) {
      const label = `${method} from ${caller()}`;
      transactions.set(label, (transactions.get(label) ?? 0) + 1);
    }
    return original(...args);
  };
}
await timeOneSession(system, 5);
const turns = 20;
counting = true;
await timeOneSession(system, turns);
counting = false;
await system.close();
const print = (title: string, counts: Map<string, number>): void => {
  const total = [...counts.values()].reduce((sum, count) => sum + count, 0);
  console.log(`\n${title}: ${(total / turns).toFixed(1)} per turn`);
  for (const [label, count] of [...counts].sort((left, right) => right[1] - left[1])) console.log(`  ${(count / turns).toFixed(2).padStart(7)}  ${label}`);
};
print("store transactions and reads", transactions);
print("statements", statements);
