/**
 * The notes MCP server, built on the MCP SDK's `McpServer`: `list_notes` and
 * `read_note` are reads (`readOnlyHint: true`), so an agent session runs them
 * without approval and retries them after a crash; `add_note` is a write
 * with no idempotency hint, so the session asks a person first and runs it
 * in a single attempt. `add_note` also remembers the idempotency key the
 * session sends in `_meta`, so a call sent twice adds one note.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { noteTitlePattern, type Note, type NotesFile } from "./notes-file.ts";

/** The `_meta` key under which a Perdure agent session sends its idempotency key (`mcpIdempotencyKeyMetaKey`). */
export const idempotencyKeyMetaKey = "io.perdure/idempotencyKey";

type TextResult = { content: { type: "text"; text: string }[]; isError?: boolean };

function textResult(text: string, isError = false): TextResult {
  return { content: [{ type: "text", text }], ...(isError ? { isError: true } : {}) };
}

function publicNote(note: Note): { title: string; text: string; created_at: string } {
  return { title: note.title, text: note.text, created_at: note.createdAt };
}

/** An MCP server over the notes in `file`; connect it to a transport. */
export function createNotesMcpServer(file: NotesFile): McpServer {
  const server = new McpServer({ name: "notes", version: "0.1.0" });

  server.registerTool("list_notes", {
    title: "List notes",
    description: "List the shop's notes (policies and reminders the team wrote down), with their titles and text.",
    inputSchema: {},
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async (_arguments, extra) => {
    const notes = file.read();
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) {
      // One progress notification per note, which the session shows as `mcp.tool_progress` events.
      for (const [index, note] of notes.entries()) {
        await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: index + 1, total: notes.length, message: `read ${note.title}` } });
      }
    }
    return textResult(JSON.stringify({ notes: notes.map(publicNote) }));
  });

  server.registerTool("read_note", {
    title: "Read a note",
    description: "Read one note by its title, such as returns.",
    inputSchema: { title: z.string().describe("The note's title, as list_notes shows it.") },
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async ({ title }) => {
    const note = file.read().find((candidate) => candidate.title === title);
    if (note === undefined) return textResult(`no note is titled ${JSON.stringify(title)}; list_notes shows the titles`, true);
    return textResult(JSON.stringify(publicNote(note)));
  });

  server.registerTool("add_note", {
    title: "Add a note",
    description: "Add a new note under a title that no note has yet. Only when the user asks to write something down.",
    inputSchema: {
      title: z.string().describe("A short title: letters, digits, - and _, such as gift-wrap."),
      text: z.string().describe("The note's text."),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  }, async ({ title, text }, extra) => {
    if (!noteTitlePattern.test(title)) return textResult(`note title ${JSON.stringify(title)} is invalid: use 1 to 64 letters, digits, - or _`, true);
    if (text.trim() === "") return textResult(`the text of note ${title} is blank: give the text to write down`, true);
    const key = extra._meta?.[idempotencyKeyMetaKey];
    const idempotencyKey = typeof key === "string" && key !== "" ? key : null;
    const notes = file.read();
    const earlier = idempotencyKey === null ? undefined : notes.find((note) => note.addedByKey === idempotencyKey);
    if (earlier !== undefined) return textResult(`added note ${earlier.title}`);
    if (notes.some((note) => note.title === title)) return textResult(`a note titled ${title} exists already; pick another title`, true);
    file.write([...notes, { title, text: text.trim(), createdAt: new Date().toISOString(), addedByKey: idempotencyKey }]);
    return textResult(`added note ${title}`);
  });

  return server;
}
