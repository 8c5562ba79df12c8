import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ModelRequest } from "@perdure/agents/stepwise";
import { describeNotesResult, replyAboutNotes } from "./demo-notes.ts";
import { notesToolNames } from "./notes-tools.ts";

function request(withNotes: boolean): ModelRequest {
  const tools = withNotes ? Object.values(notesToolNames).map((name) => ({ name, description: "", parameters: { type: "object" } })) : [];
  return { tools } as unknown as ModelRequest;
}

describe("the demo model's notes script", () => {
  it("calls the notes tool the user's words ask for", () => {
    assert.deepEqual(replyAboutNotes(request(true), "What do our notes say?", [])?.toolCalls, [{ name: "notes__list_notes", arguments: {} }]);
    assert.deepEqual(replyAboutNotes(request(true), "read the note returns", [])?.toolCalls, [{ name: "notes__read_note", arguments: { title: "returns" } }]);
    assert.deepEqual(replyAboutNotes(request(true), "add a note gift-wrap: wrap order 1001", [])?.toolCalls, [{ name: "notes__add_note", arguments: { title: "gift-wrap", text: "wrap order 1001" } }]);
    assert.deepEqual(replyAboutNotes(request(true), "please write down a note: Call Ana back on Monday", [])?.toolCalls, [{ name: "notes__add_note", arguments: { title: "call-ana-back", text: "Call Ana back on Monday" } }]);
  });

  it("leaves other messages, and agents without the notes tools, to the rest of the script", () => {
    assert.equal(replyAboutNotes(request(true), "where is order 1001?", []), undefined);
    assert.equal(replyAboutNotes(request(false), "What do our notes say?", []), undefined);
    assert.equal(replyAboutNotes(request(true), "where is order 1001?", [{ toolName: "lookup_order", output: "{}" }]), undefined);
  });

  it("describes the notes tools' results, and a server's error text as it is", () => {
    assert.equal(describeNotesResult("notes__list_notes", '{"notes":[{"title":"returns","text":"Free within 30 days."}]}'), "The notes server has 1 note: returns (Free within 30 days.).");
    assert.equal(describeNotesResult("notes__read_note", '{"title":"returns","text":"Free within 30 days."}'), "Note returns: Free within 30 days.");
    assert.equal(describeNotesResult("notes__add_note", "added note gift-wrap"), "Saved on the notes server: added note gift-wrap.");
    assert.equal(describeNotesResult("notes__read_note", 'no note is titled "x"; list_notes shows the titles'), 'The notes server said: no note is titled "x"; list_notes shows the titles');
  });
});
