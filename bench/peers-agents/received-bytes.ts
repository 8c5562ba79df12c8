/**
 * What a PostgreSQL agent turn receives from the server, by what it is for:
 * runs turns of the bench's session (see perdure-agent.ts) and sums, per
 * turn, the JSON size of every statement's rows by the SQL's first words,
 * and of the claims' plain Attributes and loads by the claimed Step type
 * (a commit's reply carries the next Step's claim, loads included); what
 * it sends (each statement's parameters as text, and a commit request's
 * fields); and how many statements it sends, with the Worker loop's claims
 * by how many tasks they took. For finding what to cut, not for timing.
 *
 *   node bench/peers-agents/received-bytes.ts [sessions]   # needs PERDURE_BENCH_DATABASE_URL or PERDURE_TEST_DATABASE_URL
 *
 * One session runs 20 turns; more sessions (a Worker with as many slots)
 * run 10 turns each at once.
 */
import pg from "pg";
import { benchDatabaseUrl, skippedMessage } from "../engine/scenarios/postgres-support.ts";
import { openPerdureAgentPostgres } from "./perdure-agent.ts";
import { measureSessionsThroughput, timeOneSession } from "./turn-workload.ts";

const url = benchDatabaseUrl();
if (url === undefined) {
  console.log(skippedMessage);
  process.exit(0);
}
const sessions = Number(process.argv[2] ?? "1");
if (!Number.isSafeInteger(sessions) || sessions <= 0) throw new Error(`sessions ${process.argv[2]} must be a positive integer`);
const turnsPerSession = sessions === 1 ? 20 : 10;
/** Turns counted, the divisor of every figure. */
const turns = sessions * turnsPerSession;
const system = await openPerdureAgentPostgres(url, Math.max(4, sessions));
const byStatement = new Map<string, number>();
const byClaim = new Map<string, number>();
const sentByStatement = new Map<string, number>();
const sentByCommitField = new Map<string, number>();
const statementCounts = new Map<string, number>();
const loopClaims = new Map<string, number>();
let counting = false;

function add(map: Map<string, number>, key: string, bytes: number): void {
  map.set(key, (map.get(key) ?? 0) + bytes);
}

interface Claim { execution?: Record<string, unknown>; attributes?: unknown; loaded?: unknown }

/** Sizes the claims a reply carries (`claims`, or a handover's `attributes`), by the claimed Step type and method. */
function sizeClaims(reply: unknown): void {
  if (reply === null || typeof reply !== "object") return;
  const answers = Array.isArray(reply) ? reply : [reply];
  for (const answer of answers) {
    const { claimed, handed } = answer as { claimed?: { claims?: Claim[] } | null; handed?: { attributes?: unknown } };
    if (handed !== undefined) add(byClaim, "handed over: plain Attributes", JSON.stringify(handed.attributes ?? []).length);
    sizeClaimList(claimed?.claims ?? (answer as { claims?: Claim[] }).claims ?? []);
  }
}

function sizeClaimList(claims: Claim[]): void {
  for (const claim of claims) {
    const execution = claim.execution ?? {};
    const stepType = typeof execution["step_type"] === "string" ? execution["step_type"] : "?";
    const label = `${stepType} ${execution["status"] === "asking" ? "waitUntil" : "execute"}`;
    add(byClaim, `${label}: plain Attributes`, JSON.stringify(claim.attributes ?? []).length);
    add(byClaim, `${label}: loads`, JSON.stringify(claim.loaded ?? []).length);
    add(byClaim, `${label}: execution row`, JSON.stringify(execution).length);
  }
}

/** Sizes a statement's parameters as text, and a JSON object parameter's fields (a commit's request) apart. */
function sizeSent(label: string, values: readonly unknown[]): void {
  for (const value of values) {
    const text = typeof value === "string" ? value : JSON.stringify(value) ?? "";
    add(sentByStatement, label, text.length);
    if (!label.includes("perdure_commit_step") || !text.startsWith("{")) continue;
    for (const [field, fieldValue] of Object.entries(JSON.parse(text) as Record<string, unknown>)) add(sentByCommitField, field, JSON.stringify(fieldValue).length);
  }
}

const clientPrototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const originalQuery = clientPrototype.query;
clientPrototype.query = function measuredQuery(this: unknown, ...args: unknown[]): unknown {
  const result = originalQuery.apply(this, args);
  if (!counting || !(result instanceof Promise)) return result;
  const first = args[0];
  const given = typeof first === "string" ? first : (first as { text?: unknown }).text;
  const label = (typeof given === "string" ? given : "").replace(/\s+/g, " ").replace(/"[^"]*"\./g, "").trim().slice(0, 60);
  add(statementCounts, label, 1);
  sizeSent(label, Array.isArray(args[1]) ? args[1] : (first as { values?: unknown[] }).values ?? []);
  return result.then((value: { rows?: Record<string, unknown>[] }) => {
    const rows = value.rows ?? [];
    add(byStatement, label, JSON.stringify(rows).length);
    for (const row of rows) sizeClaims(row["reply"]);
    if (label.includes("perdure_claim_plain")) for (const row of rows) add(loopClaims, `claims that took ${((row["reply"] as { claims?: unknown[] } | null)?.claims ?? []).length}`, 1);
    return value;
  });
};

try {
  await timeOneSession(system, 3);
  counting = true;
  if (sessions === 1) await timeOneSession(system, turnsPerSession);
  else await measureSessionsThroughput(system, sessions, turnsPerSession);
  counting = false;
} finally {
  await system.close();
}
const print = (title: string, map: Map<string, number>) => {
  const total = [...map.values()].reduce((sum, bytes) => sum + bytes, 0);
  console.log(`\n${title}: ${(total / 1024 / turns).toFixed(1)} KB per turn`);
  for (const [key, bytes] of [...map].sort((left, right) => right[1] - left[1]).slice(0, 20)) console.log(`${(bytes / 1024 / turns).toFixed(2).padStart(8)}  ${key}`);
};
print("rows received, as JSON, by statement", byStatement);
print("claims in replies, by the claimed Step", byClaim);
print("parameters sent, as text, by statement", sentByStatement);
const counted = [...statementCounts].sort((left, right) => right[1] - left[1]);
console.log(`\nstatements: ${(counted.reduce((sum, [, count]) => sum + count, 0) / turns).toFixed(2)} per turn`);
for (const [key, count] of counted) console.log(`${(count / turns).toFixed(2).padStart(8)}  ${key}`);
console.log("\nperdure_claim_plain statements (the Worker loop's claims), by how many tasks they took, per turn");
for (const [key, count] of [...loopClaims].sort()) console.log(`${(count / turns).toFixed(2).padStart(8)}  ${key}`);
print("commit requests sent, by field", sentByCommitField);
