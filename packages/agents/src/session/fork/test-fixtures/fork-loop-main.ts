/**
 * A process that forks session "source" of the store argv[2] names
 * (`sqlite:<path>`, or `postgres:<schema>` on PERDURE_TEST_DATABASE_URL)
 * again and again at random turn boundaries, printing `forked <id>` after
 * each, until it is killed: the SIGKILL-during-fork test kills it at a
 * random moment.
 */
import { Client, type Store } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import { requireTestDatabaseUrl } from "@perdure/engine/testing";
import { forkSession } from "../fork-session.ts";
import { createNoteTakingAgentFlow, createNoteTakingModel } from "./note-taking-agent.ts";

const [storeSpec, prefix, turnsText] = process.argv.slice(2);
if (storeSpec === undefined || prefix === undefined || turnsText === undefined) throw new Error("usage: fork-loop-main.ts <sqlite:path | postgres:schema> <fork ID prefix> <source turns>");

async function openStore(spec: string): Promise<Store> {
  if (spec.startsWith("sqlite:")) return SqliteStore.open({ path: spec.slice("sqlite:".length), durability: "process-crash-safe" });
  if (spec.startsWith("postgres:")) {
    const { PostgresStore } = await import("@perdure/engine/postgres");
    return PostgresStore.open({ connectionString: requireTestDatabaseUrl(), schema: spec.slice("postgres:".length), poolSize: 2 });
  }
  throw new Error(`store ${spec} is neither sqlite:<path> nor postgres:<schema>`);
}

const store = await openStore(storeSpec);
const client = new Client({ store });
const flow = createNoteTakingAgentFlow(createNoteTakingModel());
for (let count = 0; ; count += 1) {
  const sessionId = `${prefix}-${count}`;
  await forkSession(client, flow, { sourceSessionId: "source", throughTurn: Math.floor(Math.random() * (Number(turnsText) + 1)), sessionId });
  process.stdout.write(`forked ${sessionId}\n`);
}
