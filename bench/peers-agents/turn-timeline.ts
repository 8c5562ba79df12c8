/**
 * One PostgreSQL agent turn as a timeline: every statement this process
 * sends during the turn, with when it left and when its answer came back,
 * from the turn's start. The gaps between answers and the next statement
 * are the Worker's and the Client's own time; statements that overlap run
 * side by side. For finding what sits on a turn's critical path, not for
 * timing (the statements' figures are one turn's).
 *
 *   PERDURE_TEST_DATABASE_URL=... node bench/peers-agents/turn-timeline.ts [turns to show]
 *
 * It warms a session up with 8 turns, then prints the next ones.
 */
import pg from "pg";
import { benchDatabaseUrl, skippedMessage } from "../engine/scenarios/postgres-support.ts";
import { openPerdureAgentPostgres } from "./perdure-agent.ts";

const url = benchDatabaseUrl();
if (url === undefined) {
  console.log(skippedMessage);
  process.exit(0);
}
const shown = Number(process.argv[2] ?? "3");
if (!Number.isSafeInteger(shown) || shown <= 0) throw new Error(`turns to show ${process.argv[2]} must be a positive integer`);

interface Sent {
  startMs: number;
  endMs: number;
  statement: string;
}

let turnStart = 0;
let sent: Sent[] | undefined;

type Query = (this: pg.Client, ...args: unknown[]) => unknown;
const prototype = pg.Client.prototype as unknown as { query: Query };
const query = prototype.query;
prototype.query = function (this: pg.Client, ...args: unknown[]): unknown {
  const first = args[0] as string | { text?: string } | undefined;
  const text = typeof first === "string" ? first : first?.text ?? "";
  // The statement's first words, without the schema name or a catalog constant.
  const statement = text.replace(/\s+/g, " ").replace(/"perdure_[a-z0-9_]+"\./g, "").replace(/'\{.*$/, "…").slice(0, 80);
  const startMs = performance.now() - turnStart;
  const result = query.apply(this, args);
  const recording = sent;
  if (recording !== undefined && result instanceof Promise) {
    result.then(() => recording.push({ startMs, endMs: performance.now() - turnStart, statement }), () => undefined);
  }
  return result;
};

const system = await openPerdureAgentPostgres(url, 4);
try {
  await system.startSession("timeline");
  for (let turn = 1; turn <= 8; turn++) await system.runTurn("timeline", turn);
  for (let turn = 9; turn < 9 + shown; turn++) {
    const recording: Sent[] = [];
    sent = recording;
    turnStart = performance.now();
    await system.runTurn("timeline", turn);
    const totalMs = performance.now() - turnStart;
    sent = undefined;
    // Answers still on their way when the turn ended are the next turn's beginnings, or housekeeping.
    await new Promise((resolve) => setTimeout(resolve, 50));
    console.log(`turn ${turn}: ${totalMs.toFixed(2)} ms, ${recording.length} statements`);
    for (const { startMs, endMs, statement } of recording.sort((left, right) => left.startMs - right.startMs)) {
      console.log(`  ${startMs.toFixed(2).padStart(7)} → ${endMs.toFixed(2).padStart(7)} ms  ${statement}`);
    }
  }
} finally {
  prototype.query = query;
  await system.close();
}
