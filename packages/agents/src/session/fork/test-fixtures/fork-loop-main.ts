/**
 * A process that forks session "source" of the store at argv[2] again and
 * again at random turn boundaries, printing `forked <id>` after each, until
 * it is killed: the SIGKILL-during-fork test kills it at a random moment.
 */
import { Client } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import { forkSession } from "../fork-session.ts";
import { createNoteTakingAgentFlow, createNoteTakingModel } from "./note-taking-agent.ts";

const [databasePath, prefix, turnsText] = process.argv.slice(2);
if (databasePath === undefined || prefix === undefined || turnsText === undefined) throw new Error("usage: fork-loop-main.ts <database path> <fork ID prefix> <source turns>");
const store = SqliteStore.open({ path: databasePath, durability: "process-crash-safe" });
const client = new Client({ store });
const flow = createNoteTakingAgentFlow(createNoteTakingModel());
for (let count = 0; ; count += 1) {
  const sessionId = `${prefix}-${count}`;
  await forkSession(client, flow, { sourceSessionId: "source", throughTurn: Math.floor(Math.random() * (Number(turnsText) + 1)), sessionId });
  process.stdout.write(`forked ${sessionId}\n`);
}
