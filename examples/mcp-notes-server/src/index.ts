/**
 * `@perdure/example-mcp-notes-server`: a small MCP server over stdio with
 * the shop's notes (`list_notes`, `read_note`, `add_note`), kept in a JSON
 * file. The support agent demo reaches it through `McpToolSource`.
 *
 * @example
 * import { McpToolSource } from "@perdure/agents/mcp";
 * import { notesMcpServerConfig } from "@perdure/example-mcp-notes-server";
 *
 * const notes = new McpToolSource([notesMcpServerConfig({ file: ".perdure/notes.json" })]);
 * // Its tools are offered as notes__list_notes, notes__read_note and notes__add_note.
 */
import { extname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export { NotesFile, initialNotes, noteTitlePattern } from "./notes-file.ts";
export type { Note } from "./notes-file.ts";
export { createNotesMcpServer, idempotencyKeyMetaKey } from "./notes-server.ts";

/**
 * The server's entry file, found beside this module: `src/main.ts` inside
 * this repository, `dist/main.js` once the package is built and installed.
 * It never depends on the working directory.
 */
export const notesMcpServerEntryPath: string = fileURLToPath(new URL(`./main${extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/** Options of {@link notesMcpServerConfig}. */
export interface NotesMcpServerConfigOptions {
  /**
   * The JSON file that keeps the notes, created on the first `add_note`.
   * A relative path is resolved against the working directory now.
   * @default process.env.PERDURE_NOTES_FILE, else ".perdure/notes.json"
   */
  file?: string;
  /** The server's name in the agent, the prefix of its tool names. @default "notes" */
  name?: string;
}

/** A stdio server config for `McpToolSource` (structurally `McpStdioServerConfig` of `@perdure/agents/mcp`). */
export interface NotesMcpServerConfig {
  transport: "stdio";
  name: string;
  command: string;
  args: string[];
}

/**
 * The stdio config that starts this server with the current Node.js binary.
 *
 * @example
 * new McpToolSource([notesMcpServerConfig()]);
 */
export function notesMcpServerConfig(options: NotesMcpServerConfigOptions = {}): NotesMcpServerConfig {
  const environmentFile = process.env.PERDURE_NOTES_FILE;
  const file = options.file ?? (environmentFile !== undefined && environmentFile !== "" ? environmentFile : ".perdure/notes.json");
  if (typeof file !== "string" || file === "") throw new TypeError(`notes file ${JSON.stringify(file)} is invalid: give a file path`);
  const name = options.name ?? "notes";
  return { transport: "stdio", name, command: process.execPath, args: [notesMcpServerEntryPath, "--file", resolve(file)] };
}
