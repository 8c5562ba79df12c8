/**
 * A short support conversation in the terminal: a lookup (a read tool), a
 * refund (a write that waits for approval, which this script gives) and the
 * shop's notes, read from the example notes MCP server over stdio. It uses
 * the scripted demo model unless a model key is set (see model.ts).
 */
import { Client, Worker } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import { chooseModel } from "./model.ts";
import { createNotesToolSource } from "./notes-tools.ts";
import { createSupportAgentFlow } from "./support-agent-flow.ts";

const { model, description } = await chooseModel();
const flow = createSupportAgentFlow(model, { notes: createNotesToolSource() });
// PERDURE_DATABASE_URL selects PostgreSQL, as for every perdure command.
const databaseUrl = process.env.PERDURE_DATABASE_URL;
const store = databaseUrl === undefined || databaseUrl === ""
  ? SqliteStore.open({ path: process.env.PERDURE_SQLITE_PATH ?? ".perdure/support-agent.db" })
  : await (await import("@perdure/engine/postgres")).PostgresStore.open({ connectionString: databaseUrl });
const worker = new Worker({ store, flows: [flow] });
await worker.start();
const client = new Client({ store });
const sessions = new AgentSessionTestClient(client, flow);
const sessionId = `support-${Date.now()}`;
console.log(`model: ${description}\nsession: ${sessionId}\n`);
await sessions.start(sessionId);

/** Position in the session's event Stream, kept across turns so each turn prints only its own events. */
let after: string | undefined;

async function converse(text: string, turn: number): Promise<void> {
  console.log(`customer> ${text}`);
  await sessions.sendUserMessage(sessionId, text);
  process.stdout.write("agent> ");
  for (;;) {
    const read = await client.readStream(sessionId, flow.agentEvents, { waitMs: 500, ...(after === undefined ? {} : { after }) });
    after = read.nextToken;
    for (const { value: event } of read.messages) {
      if (event.type === "text_delta") process.stdout.write(String(event.payload.text));
      if (event.type === "tool_call_started") process.stdout.write(`\n  [running ${String(event.payload.tool_name)}]\n  `);
      if (event.type === "interrupt_raised") {
        process.stdout.write(`\n  [approval needed for ${String(event.payload.tool_name)}: approving]\n  `);
        await sessions.resolveInterrupt(sessionId, { interruptId: String(event.payload.interrupt_id), approved: true });
      }
    }
    const [state] = await client.getAttributes(sessionId, flow.agentState);
    if (state !== undefined && state.turnCount >= turn && state.activeTurnId === null && read.messages.length === 0) break;
  }
  process.stdout.write("\n\n");
}

await converse("Hi there!", 1);
await converse("Where is order 1001?", 2);
await converse("Please refund order 1002.", 3);
await converse("What do our notes say?", 4);
const snapshot = await sessions.getAgentSnapshot(sessionId);
console.log(`stored ${snapshot.messages.length} messages; usage ${snapshot.usage.totalTokens} tokens`);
await worker.close();
await store.close();
