#!/usr/bin/env node
/**
 * `node main.ts --file <notes.json>`: the notes MCP server over stdin and
 * stdout. It exits when stdin ends, as stdio MCP clients expect; logs go to
 * stderr, which stdout's protocol never sees.
 */
import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { NotesFile } from "./notes-file.ts";
import { createNotesMcpServer } from "./notes-server.ts";

const usage = "usage: perdure-example-notes-mcp-server --file <notes.json>";

let file: string | undefined;
try {
  ({ values: { file } } = parseArgs({ options: { file: { type: "string" } }, strict: true }));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n${usage}\n`);
  process.exit(2);
}
if (file === undefined || file === "") {
  process.stderr.write(`the notes file is missing: pass --file <path>\n${usage}\n`);
  process.exit(2);
}

await createNotesMcpServer(new NotesFile(file)).connect(new StdioServerTransport());
process.stdin.on("end", () => process.exit(0));
