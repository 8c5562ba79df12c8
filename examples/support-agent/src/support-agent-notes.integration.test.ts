/**
 * The support agent with the notes MCP server (a real stdio child process
 * per request) on the demo model: a read runs in `CallTool` without
 * approval and reports its progress; `add_note` asks for approval first and
 * runs once in `CallSingleAttemptTool`.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore } from "@perdure/engine/testing";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import { createDemoModel } from "./demo-model.ts";
import { createNotesToolSource } from "./notes-tools.ts";
import { createSupportAgentFlow } from "./support-agent-flow.ts";

void test("the support agent reads the notes MCP server without approval and adds a note once after approval, on the demo model", async () => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-support-notes-"));
  const notesFile = join(folder, "notes.json");
  const temporary = createTemporarySqliteStore();
  const flow = createSupportAgentFlow(createDemoModel(), { notes: createNotesToolSource({ file: notesFile }) });
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
  await worker.start();
  const sessions = new AgentSessionTestClient(new Client({ store: temporary.store }), flow);
  try {
    await sessions.start("notes-test");
    await sessions.sendUserMessage("notes-test", "What do our notes say?");
    await sessions.waitForTurnCount("notes-test", 1);
    let snapshot = await sessions.getAgentSnapshot("notes-test");
    assert.equal(snapshot.messages.at(-1)?.text, "The notes server has 2 notes: returns (Returns are free within 30 days of delivery; refunds go back to the original payment method.); shipping (Orders leave the warehouse within two working days; the tracking link is in the confirmation email.).");
    const events = await sessions.readEvents("notes-test");
    const deferred = events.find((event) => event.type === "tool_call_deferred");
    assert.deepEqual(deferred?.payload, { tool_call_id: deferred?.payload.tool_call_id, tool_name: "notes__list_notes", effect: "read", requires_approval: false });
    assert.deepEqual(events.filter((event) => event.type === "mcp.tool_progress").map((event) => [event.payload.tool_name, event.payload.server, event.payload.progress, event.payload.total, event.payload.message]), [
      ["notes__list_notes", "notes", 1, 2, "read returns"],
      ["notes__list_notes", "notes", 2, 2, "read shipping"],
    ]);

    await sessions.sendUserMessage("notes-test", "add a note gift-wrap: wrap order 1001 in gift paper");
    const [interrupt] = await sessions.waitForPendingInterrupts("notes-test");
    assert.equal(interrupt?.toolName, "notes__add_note");
    assert.equal(interrupt?.arguments, '{"title":"gift-wrap","text":"wrap order 1001 in gift paper"}');
    assert.equal(await sessions.resolveInterrupt("notes-test", { interruptId: interrupt?.interruptId ?? "", approved: true }), true);
    await sessions.waitForTurnCount("notes-test", 2);
    snapshot = await sessions.getAgentSnapshot("notes-test");
    assert.equal(snapshot.messages.at(-1)?.text, "Saved on the notes server: added note gift-wrap.");
    const stored = JSON.parse(readFileSync(notesFile, "utf8")) as { notes: { title: string; text: string; addedByKey: string }[] };
    assert.deepEqual(stored.notes.map((note) => note.title), ["returns", "shipping", "gift-wrap"]);
    assert.equal(stored.notes.at(-1)?.addedByKey, `notes-test/turn-2/${interrupt?.toolCallId ?? ""}`, "the note was not added with the session's idempotency key");

    const history = await sessions.client.getStepHistory("notes-test");
    const completed = (stepType: string): number => history.filter((entry) => entry.stepType === stepType && entry.method === "execute" && entry.status === "completed").length;
    assert.deepEqual([completed("CallTool"), completed("CallSingleAttemptTool"), completed("AwaitToolApproval")], [1, 1, 1]);
  } finally {
    await worker.close();
    await temporary.dispose();
    rmSync(folder, { recursive: true, force: true });
  }
});
