/**
 * The demo model's use of the notes MCP server: what a real model does with
 * `notes__list_notes`, `notes__read_note` and `notes__add_note`, scripted
 * over the conversation, and offered only when the agent has the notes
 * tools.
 */
import type { ModelRequest, ScriptedModelReply } from "@perdure/agents/stepwise";
import { notesToolNames } from "./notes-tools.ts";

const notesTools: readonly string[] = Object.values(notesToolNames);

/** "add a note gift-wrap: wrap order 1001", "write down a note: call Ana back". */
const addNotePattern = /\b(?:add|write down|save|take)\b[^:]*\bnote\b(?:\s+(?:called|titled)\s+|\s+)?([A-Za-z0-9_-]+)?\s*:\s*(.+)$/i;
/** "read the note returns", "show note shipping". */
const readNotePattern = /\b(?:read|open|show)\b.*\bnote\s+([A-Za-z0-9_-]+)/i;

function titleFromText(text: string): string {
  return text.toLowerCase().split(/[^a-z0-9]+/).filter((word) => word !== "").slice(0, 3).join("-") || "note";
}

/** The model's words about one notes tool result. */
export function describeNotesResult(toolName: string, output: string): string {
  try {
    if (toolName === notesToolNames.list) {
      const { notes } = JSON.parse(output) as { notes: { title: string; text: string }[] };
      return `The notes server has ${notes.length} ${notes.length === 1 ? "note" : "notes"}: ${notes.map((note) => `${note.title} (${note.text})`).join("; ")}.`;
    }
    if (toolName === notesToolNames.read) {
      const note = JSON.parse(output) as { title: string; text: string };
      return `Note ${note.title}: ${note.text}`;
    }
  } catch {
    // Not JSON: the server's error text.
  }
  if (toolName === notesToolNames.add && output.startsWith("added note ")) return `Saved on the notes server: ${output}.`;
  return `The notes server said: ${output}`;
}

/**
 * A reply about notes when the user asks about them (and the agent has the
 * notes tools), or describes the notes tools' results; undefined otherwise.
 */
export function replyAboutNotes(request: ModelRequest, userText: string, results: readonly { toolName: string; output: string }[]): ScriptedModelReply | undefined {
  if (!request.tools.some((tool) => tool.name === notesToolNames.list)) return undefined;
  if (results.length > 0) {
    if (!results.some((result) => notesTools.includes(result.toolName))) return undefined;
    return { text: results.map((result) => describeNotesResult(result.toolName, result.output)).join(" ") };
  }
  const add = addNotePattern.exec(userText);
  if (add?.[2] !== undefined) {
    const text = add[2].trim();
    const title = add[1] ?? titleFromText(text);
    return { text: `I will add the note ${title} once you approve it.`, toolCalls: [{ name: notesToolNames.add, arguments: { title, text } }] };
  }
  const read = readNotePattern.exec(userText);
  if (read?.[1] !== undefined) return { text: `Let me read the note ${read[1]}.`, toolCalls: [{ name: notesToolNames.read, arguments: { title: read[1] } }] };
  if (/\bnotes?\b/i.test(userText)) return { text: "Let me check the shop's notes.", toolCalls: [{ name: notesToolNames.list, arguments: {} }] };
  return undefined;
}
