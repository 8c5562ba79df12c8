/**
 * The shop's notes as agent tools: the example notes MCP server
 * (`@perdure/example-mcp-notes-server`), started over stdio by
 * `McpToolSource` for each request, offers `notes__list_notes`,
 * `notes__read_note` (reads) and `notes__add_note` (a write that asks for
 * approval), each call in its own tool Step.
 */
import { McpToolSource } from "@perdure/agents/mcp";
import { notesMcpServerConfig } from "@perdure/example-mcp-notes-server";

/** The agent names of the notes server's tools. */
export const notesToolNames = { list: "notes__list_notes", read: "notes__read_note", add: "notes__add_note" } as const;

/** Options of {@link createNotesToolSource}. */
export interface NotesToolSourceOptions {
  /** The notes JSON file. @default process.env.PERDURE_NOTES_FILE, else ".perdure/notes.json" */
  file?: string;
}

/** The notes MCP server as a Stepwise tool source; nothing starts until the first listing. */
export function createNotesToolSource(options: NotesToolSourceOptions = {}): McpToolSource {
  return new McpToolSource([notesMcpServerConfig(options.file === undefined ? {} : { file: options.file })]);
}

export const notesInstructions = [
  "The shop's notes (policies and reminders) are on the notes MCP server:",
  "read them with notes__list_notes or notes__read_note before you answer policy questions,",
  "and write one down with notes__add_note only when asked to.",
].join(" ");
