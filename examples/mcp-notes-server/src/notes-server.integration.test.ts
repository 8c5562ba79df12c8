/**
 * The notes MCP server as a real stdio child process, reached with the MCP
 * SDK's client: its tools and annotations, notes that outlive the process
 * (each connection is a new process), progress notifications, the
 * idempotency key, and its errors.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { idempotencyKeyMetaKey, initialNotes, notesMcpServerConfig, notesMcpServerEntryPath } from "./index.ts";

async function withServer<TResult>(file: string, use: (client: Client) => Promise<TResult>): Promise<TResult> {
  const config = notesMcpServerConfig({ file });
  const client = new Client({ name: "notes-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: config.command, args: config.args, stderr: "pipe" }));
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** The text of a `tools/call` result (the SDK types it as a union with its pre-2024 shape). */
function textOf(result: unknown): string {
  return ((result as { content: { type: string; text?: string }[] }).content).map((block) => block.text ?? "").join("\n");
}

function isErrorOf(result: unknown): unknown {
  return (result as { isError?: unknown }).isError;
}

function temporaryFile(): { file: string; dispose: () => void } {
  const folder = mkdtempSync(join(tmpdir(), "perdure-notes-"));
  return { file: join(folder, "data", "notes.json"), dispose: () => rmSync(folder, { recursive: true, force: true }) };
}

describe("the notes MCP server over stdio", () => {
  it("is found beside its own module and started with this Node.js, whatever the working directory", () => {
    assert.ok(existsSync(notesMcpServerEntryPath), `no server entry at ${notesMcpServerEntryPath}`);
    assert.match(notesMcpServerEntryPath, /[/\\]src[/\\]main\.ts$/);
    const config = notesMcpServerConfig({ file: "relative/notes.json" });
    assert.deepEqual(config, { transport: "stdio", name: "notes", command: process.execPath, args: [notesMcpServerEntryPath, "--file", join(process.cwd(), "relative/notes.json")] });
    assert.throws(() => notesMcpServerConfig({ file: "" }), { message: 'notes file "" is invalid: give a file path' });
  });

  it("lists three tools whose annotations make the two reads read-only and add_note a write", async () => {
    const { file, dispose } = temporaryFile();
    try {
      const tools = await withServer(file, async (client) => (await client.listTools()).tools);
      assert.deepEqual(tools.map((tool) => [tool.name, tool.annotations?.readOnlyHint, tool.annotations?.idempotentHint]), [
        ["list_notes", true, undefined],
        ["read_note", true, undefined],
        ["add_note", false, false],
      ]);
      assert.equal(existsSync(file), false, "listing wrote the notes file");
    } finally {
      dispose();
    }
  });

  it("a note added in one server process is read by the next, and a repeated call with the same idempotency key adds it once", async () => {
    const { file, dispose } = temporaryFile();
    try {
      const add = (client: Client, key: string) => client.callTool({ name: "add_note", arguments: { title: "gift-wrap", text: " Wrap order 1001. " }, _meta: { [idempotencyKeyMetaKey]: key } });
      assert.equal(textOf(await withServer(file, (client) => add(client, "session-1/turn-1/call-1"))), "added note gift-wrap");
      assert.equal(textOf(await withServer(file, (client) => add(client, "session-1/turn-1/call-1"))), "added note gift-wrap");
      const again = await withServer(file, (client) => add(client, "session-1/turn-2/call-1"));
      assert.deepEqual([isErrorOf(again), textOf(again)], [true, "a note titled gift-wrap exists already; pick another title"]);
      const read = await withServer(file, (client) => client.callTool({ name: "read_note", arguments: { title: "gift-wrap" } }));
      assert.equal((JSON.parse(textOf(read)) as { text: string }).text, "Wrap order 1001.");
      const stored = JSON.parse(readFileSync(file, "utf8")) as { notes: { title: string; addedByKey: string | null }[] };
      assert.deepEqual(stored.notes.map((note) => [note.title, note.addedByKey]), [...initialNotes.map((note) => [note.title, null]), ["gift-wrap", "session-1/turn-1/call-1"]]);
    } finally {
      dispose();
    }
  });

  it("list_notes sends one progress notification per note before its result", async () => {
    const { file, dispose } = temporaryFile();
    try {
      const progress: unknown[] = [];
      const result = await withServer(file, (client) => {
        // Read off the wire: the SDK's onprogress drops a notification that arrives in the same chunk as the result.
        const transport = client.transport;
        assert.ok(transport !== undefined);
        const onmessage = transport.onmessage;
        transport.onmessage = (message, extra) => {
          if ("method" in message && message.method === "notifications/progress") progress.push({ ...message.params, progressToken: undefined });
          onmessage?.(message, extra);
        };
        return client.callTool({ name: "list_notes", arguments: {} }, CallToolResultSchema, { onprogress: () => undefined });
      });
      assert.deepEqual((JSON.parse(textOf(result)) as { notes: { title: string }[] }).notes.map((note) => note.title), ["returns", "shipping"]);
      assert.deepEqual(progress, [
        { progressToken: undefined, progress: 1, total: 2, message: "read returns" },
        { progressToken: undefined, progress: 2, total: 2, message: "read shipping" },
      ]);
    } finally {
      dispose();
    }
  });

  it("bad input gets an error result naming the value, and changes nothing", async () => {
    const { file, dispose } = temporaryFile();
    try {
      const results = await withServer(file, async (client) => [
        await client.callTool({ name: "read_note", arguments: { title: "nope" } }),
        await client.callTool({ name: "add_note", arguments: { title: "two words", text: "x" } }),
        await client.callTool({ name: "add_note", arguments: { title: "blank", text: "  " } }),
      ]);
      assert.deepEqual(results.map((result) => [isErrorOf(result), textOf(result)]), [
        [true, 'no note is titled "nope"; list_notes shows the titles'],
        [true, 'note title "two words" is invalid: use 1 to 64 letters, digits, - or _'],
        [true, "the text of note blank is blank: give the text to write down"],
      ]);
      assert.equal(existsSync(file), false);
    } finally {
      dispose();
    }
  });

  it("a file that is not a notes file is refused with its path", async () => {
    const { file, dispose } = temporaryFile();
    try {
      await withServer(file, (client) => client.callTool({ name: "add_note", arguments: { title: "first", text: "x" } }));
      writeFileSync(file, '{"notes": [{"title": 1}]}');
      const result = await withServer(file, (client) => client.callTool({ name: "list_notes", arguments: {} }));
      assert.equal(isErrorOf(result), true);
      assert.match(textOf(result), new RegExp(`notes file ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is not a notes file`));
    } finally {
      dispose();
    }
  });
});
