/**
 * McpToolSource against the real notes server (the SDK's McpServer) over
 * stdio child processes and Streamable HTTP on loopback: listing, names,
 * effects, the idempotency key, progress, and each row of the outcome table.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ToolExecutionError } from "../contract/tool-execution-error.ts";
import { FileGate } from "../testing/file-gate.ts";
import { findFreeLoopbackPorts } from "../testing/find-free-loopback-ports.ts";
import type { DeferredToolExecution, ToolExecutionResult, ToolTaskStarted } from "../contract/agent-framework-runner.ts";
import type { AgentEventWriter } from "../contract/values/agent-event.ts";
import { McpToolCallInterruptedError } from "./mcp-tool-call-interrupted-error.ts";
import { mcpIdempotencyKeyMetaKey } from "./mcp-tool-call.ts";
import { McpToolSource } from "./mcp-tool-source.ts";
import { notesServerFolder, notesStdioServer, startNotesHttpServer } from "./test-fixtures/notes-mcp-servers.ts";

function recordingEvents(): { events: AgentEventWriter; written: { type: string; payload: Record<string, unknown> }[] } {
  const written: { type: string; payload: Record<string, unknown> }[] = [];
  const write = async (type: string, payload: Record<string, unknown>): Promise<void> => { written.push({ type, payload }); };
  return { written, events: { write, textDelta: (text) => write("text_delta", { text }), reasoningDelta: (text) => write("reasoning_delta", { text }) } };
}

/** A tool Step's execution of a call, as the session builds it. */
function execution(toolName: string, argumentsValue: unknown, reference: string, events: AgentEventWriter, signal = new AbortController().signal): DeferredToolExecution {
  return {
    flowId: "flow-1",
    toolCall: {
      toolCallId: "call-1", turnId: "turn-1", toolName, arguments: JSON.stringify(argumentsValue), effect: "read", requiresApproval: false,
      status: "approved", output: null, error: null, startedAt: null, finishedAt: null, toolSourceReference: reference, deferralOrder: 0,
    } as unknown as DeferredToolExecution["toolCall"],
    idempotencyKey: "flow-1/turn-1/call-1",
    attempt: 1,
    events,
    cancellationSignal: signal,
    deadline: new Date(Date.now() + 60_000),
    heartbeat: async () => undefined,
    heartbeatCheckpoint: undefined,
    saveHeartbeatCheckpoint: async () => undefined,
  };
}

/** The output text of a call that returned a result. */
function outputOf(result: ToolExecutionResult | ToolTaskStarted): string {
  assert.ok("output" in result, `expected an output, got ${JSON.stringify(result)}`);
  return result.output;
}

function quietSource(servers: ConstructorParameters<typeof McpToolSource>[0], options: ConstructorParameters<typeof McpToolSource>[1] = {}, clock?: { now: () => number }) {
  const warnings: string[] = [];
  const source = new McpToolSource(servers, { ...options, onWarning: (message) => warnings.push(message) }, clock);
  return { source, warnings };
}

describe("McpToolSource over stdio", () => {
  it("lists the server's tools as <server>__<tool> with effects from their annotations and default approvals", async (t) => {
    const folder = notesServerFolder(t);
    const { source } = quietSource([notesStdioServer(folder)]);
    const tools = await source.listTools();
    assert.deepEqual(tools.map((tool) => [tool.name, tool.mcpToolName, tool.effect ?? null]), [
      ["notes__read_note", "read_note", "read"],
      ["notes__save_note", "save_note", "idempotent_write"],
      ["notes__email_note", "email_note", null],
      ["notes__failing_note", "failing_note", "read"],
      ["notes__note_stats", "note_stats", "read"],
      ["notes__parked_read", "parked_read", "read"],
      ["notes__parked_write", "parked_write", null],
      ["notes__index_notes", "index_notes", null],
      ["notes__confirm_note", "confirm_note", null],
    ]);
    assert.deepEqual(tools.map((tool) => tool.taskSupport).slice(-3), ["forbidden", "required", "required"]);
    assert.deepEqual((tools[0]?.inputSchema as { required?: unknown }).required, ["title"]);
    assert.deepEqual(source.toolPolicies()["notes__read_note"], { effect: "read", requiresApproval: false });
    assert.deepEqual(source.toolPolicies()["notes__save_note"], { effect: "idempotent_write", requiresApproval: false });
    assert.equal(source.toolPolicies()["notes__email_note"], undefined, "an unannotated tool is left to the session's defaultToolEffect");
    const policy = source.deferredToolCall({
      resolveToolPolicy: (name: string, framework?: unknown) => {
        const effect = (framework as { effect?: "read" } | undefined)?.effect ?? "unclassified";
        return { effect, requiresApproval: effect === "unclassified" };
      },
    } as never, { toolCallId: "c1", toolName: "notes__email_note", arguments: "{}" }).policy;
    assert.deepEqual(policy, { effect: "unclassified", requiresApproval: true });
  });

  it("an untrusted server's tools get no effect from their annotations", async (t) => {
    const folder = notesServerFolder(t);
    const { source } = quietSource([notesStdioServer(folder, "notes", { trustsToolAnnotations: false })]);
    const tools = await source.listTools();
    assert.equal(tools.length, 9);
    assert.deepEqual(tools.filter((tool) => tool.effect !== undefined), []);
    assert.deepEqual(source.toolPolicies(), {});
  });

  it("a name clash offers the first tool and leaves the other out with a warning", async (t) => {
    const folder = notesServerFolder(t, { NOTES_MCP_TOOLSET: "clash" });
    const { source, warnings } = quietSource([notesStdioServer(folder)]);
    const tools = await source.listTools();
    assert.equal(tools.filter((tool) => tool.name === "notes__read_note").length, 1);
    assert.equal(tools.find((tool) => tool.name === "notes__read_note")?.mcpToolName, "read_note");
    assert.deepEqual(warnings, ["MCP tool read.note of server notes is left out: its name notes__read_note is taken by tool read_note of server notes"]);
    await source.listTools({ refresh: true });
    assert.equal(warnings.length, 1, "the clash is reported once");
  });

  it("a call carries the idempotency key in _meta, returns text blocks joined by newlines and other content as JSON, and reports progress", async (t) => {
    const folder = notesServerFolder(t);
    const { source } = quietSource([notesStdioServer(folder)]);
    const { events, written } = recordingEvents();
    const [, , , , stats] = await source.listTools();
    const deferred = source.deferredToolCall({ resolveToolPolicy: () => ({ effect: "read", requiresApproval: false }) } as never, { toolCallId: "c1", toolName: stats!.name, arguments: "{}" });
    const result = await source.executeDeferredToolCall(execution(stats!.name, {}, deferred.toolSourceReference!, events));
    assert.equal(outputOf(result), 'notes: 1\n{"name": "welcome", "type": "resource_link", "uri": "notes://welcome"}');
    assert.deepEqual(folder.log.entries().filter((entry) => entry.name === "note_stats").map((entry) => entry.details), [{ key: "flow-1/turn-1/call-1" }]);
    assert.deepEqual(written.filter((event) => event.type === "mcp.tool_progress").map((event) => event.payload), [1, 2, 3].map((step) => ({
      tool_call_id: "call-1", tool_name: "notes__note_stats", server: "notes", progress: step, total: 3, message: `step ${step}`,
    })));
    assert.equal(mcpIdempotencyKeyMetaKey, "io.perdure/idempotencyKey");
  });

  it("an isError result and an MCP error answer are ToolExecutionErrors; an unconfigured server is never called", async (t) => {
    const folder = notesServerFolder(t);
    const { source } = quietSource([notesStdioServer(folder)]);
    const { events } = recordingEvents();
    await assert.rejects(source.executeDeferredToolCall(execution("notes__failing_note", {}, JSON.stringify({ server: "notes", tool: "failing_note", task_support: "forbidden" }), events)),
      (error: unknown) => ToolExecutionError.isInstance(error) && error.message === "the note store is read-only today");
    await assert.rejects(source.executeDeferredToolCall(execution("notes__nope", {}, JSON.stringify({ server: "notes", tool: "nope", task_support: "forbidden" }), events)),
      (error: unknown) => ToolExecutionError.isInstance(error) && /Tool nope not found/.test(error.message));
    await assert.rejects(source.executeDeferredToolCall(execution("other__x", {}, JSON.stringify({ server: "other", tool: "x", task_support: "forbidden" }), events)),
      (error: unknown) => ToolExecutionError.isInstance(error) && error.message === "the MCP tool x was not called: MCP server other is not configured on this Worker");
  });

  it("a task-only tool is called as a task with a TTL of four times taskWaitTimeoutMs and polled in the tool Step, a heartbeat per poll", async (t) => {
    const folder = notesServerFolder(t);
    const { source } = quietSource([notesStdioServer(folder)], { taskWaitTimeoutMs: 30_000 });
    const { events } = recordingEvents();
    let heartbeats = 0;
    const call = execution("notes__index_notes", {}, JSON.stringify({ server: "notes", tool: "index_notes", task_support: "required" }), events);
    const result = await source.executeDeferredToolCall({ ...call, heartbeat: async () => { heartbeats += 1; } });
    assert.equal(outputOf(result), "indexed 1 notes");
    assert.deepEqual(folder.log.entries().filter((entry) => entry.name === "index_notes").map((entry) => entry.details), [{ key: "flow-1/turn-1/call-1", ttl: 120_000 }]);
    // The task ends after 900 ms and asks for polls every 200 ms.
    assert.ok(heartbeats >= 3, `one heartbeat per tasks/get, ${heartbeats} in all`);
  });

  it("a task that asks for input is cancelled and fails with the contract's text", async (t) => {
    const folder = notesServerFolder(t);
    const { source } = quietSource([notesStdioServer(folder)]);
    const { events } = recordingEvents();
    await assert.rejects(source.executeDeferredToolCall(execution("notes__confirm_note", {}, JSON.stringify({ server: "notes", tool: "confirm_note", task_support: "required" }), events)),
      (error: unknown) => ToolExecutionError.isInstance(error) && /^the MCP server asked for input that this agent session cannot provide yet \(task \S+: confirm the note\)$/.test(error.message));
  });

  it("a server that cannot start is never sent the call: failed after its connection attempts", async (t) => {
    const folder = notesServerFolder(t);
    const { source } = quietSource([{ transport: "stdio", name: "broken", command: process.execPath, args: ["-e", "process.exit(3)"] }], { connectionAttempts: 2 });
    const { events } = recordingEvents();
    await assert.rejects(source.executeDeferredToolCall(execution("broken__x", {}, JSON.stringify({ server: "broken", tool: "x", task_support: "forbidden" }), events)),
      (error: unknown) => ToolExecutionError.isInstance(error) && /^the MCP tool x was not called: could not connect to MCP server broken in 2 attempts: /.test(error.message));
    assert.equal(folder.log.entries().length, 0);
  });

  it("a stdio server SIGKILLed mid-call is an McpToolCallInterruptedError", async (t) => {
    const folder = notesServerFolder(t);
    const { source } = quietSource([notesStdioServer(folder)]);
    const { events } = recordingEvents();
    const call = source.executeDeferredToolCall(execution("notes__parked_write", {}, JSON.stringify({ server: "notes", tool: "parked_write", task_support: "forbidden" }), events));
    const settled = call.then(() => "resolved", (error: unknown) => error);
    await new FileGate(folder.directory, "parked-write").waitUntilReached();
    const [entry] = folder.log.entries().filter((logged) => logged.name === "parked_write");
    process.kill(entry!.processId, "SIGKILL");
    const error = await settled;
    assert.ok(McpToolCallInterruptedError.isInstance(error), `got ${String(error)}`);
    assert.match(error.message, /^MCP tool call parked_write on server notes was interrupted after it was sent: /);
  });
});

describe("McpToolSource over Streamable HTTP", () => {
  it("ends every protocol session with an HTTP DELETE, and the call reaches the server with its key", async (t) => {
    const folder = notesServerFolder(t);
    const server = await startNotesHttpServer(t, folder);
    const { source } = quietSource([server.config]);
    const { events } = recordingEvents();
    const tools = await source.listTools();
    assert.equal(tools[0]?.name, "notes__read_note");
    const result = await source.executeDeferredToolCall(execution("notes__read_note", { title: "welcome" }, JSON.stringify({ server: "notes", tool: "read_note", task_support: "forbidden" }), events));
    assert.equal(outputOf(result), "Hello from the notes server.");
    assert.deepEqual(folder.log.entries().filter((entry) => entry.name === "read_note").map((entry) => entry.details), [{ title: "welcome", key: "flow-1/turn-1/call-1" }]);
    const requests = folder.log.entries().filter((entry) => entry.name === "http_request").map((entry) => entry.details as { method: string; rpc: string | null; session: string | null });
    const sessions = new Set(requests.map((request) => request.session).filter((session) => session !== null));
    assert.equal(sessions.size, 2, "one protocol session for the listing, one for the call");
    for (const session of sessions) {
      assert.deepEqual(requests.filter((request) => request.session === session && request.method === "DELETE").length, 1, `session ${session} ended with one DELETE`);
    }
    assert.deepEqual(requests.filter((request) => request.rpc === "initialize").length, 2);
  });

  it("an internal error answer and an HTTP error status after sending are McpToolCallInterruptedErrors", async (t) => {
    const folder = notesServerFolder(t);
    const server = await startNotesHttpServer(t, folder);
    const { source } = quietSource([server.config]);
    const { events } = recordingEvents();
    for (const tool of ["internal_error", "gateway_error"]) {
      await assert.rejects(source.executeDeferredToolCall(execution(`notes__${tool}`, {}, JSON.stringify({ server: "notes", tool, task_support: "forbidden" }), events)),
        (error: unknown) => McpToolCallInterruptedError.isInstance(error) && error.toolName === tool, tool);
    }
  });

  it("a server killed mid-call is an McpToolCallInterruptedError", async (t) => {
    const folder = notesServerFolder(t);
    const server = await startNotesHttpServer(t, folder);
    const { source } = quietSource([server.config]);
    const { events } = recordingEvents();
    const settled = source.executeDeferredToolCall(execution("notes__parked_read", {}, JSON.stringify({ server: "notes", tool: "parked_read", task_support: "forbidden" }), events))
      .then(() => "resolved", (error: unknown) => error);
    await new FileGate(folder.directory, "parked-read").waitUntilReached();
    await server.kill();
    const error = await settled;
    assert.ok(McpToolCallInterruptedError.isInstance(error), `got ${String(error)}`);
  });

  it("an unreachable server is left out with a warning, left alone during the backoff, then listed in the background", async (t) => {
    const folder = notesServerFolder(t);
    const [port] = await findFreeLoopbackPorts(1);
    let now = 1_000_000;
    const { source, warnings } = quietSource([{ transport: "streamable_http", name: "later", url: `http://127.0.0.1:${port!}/mcp` }, notesStdioServer(folder)], { connectionAttempts: 1 }, { now: () => now });
    const first = await source.listTools();
    assert.deepEqual([...new Set(first.map((tool) => tool.serverName))], ["notes"], "the down server hides no other server's tools");
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /^MCP server later offers no tools: listing its tools failed \(.*\); it is tried again in the background after 30000 ms$/);
    now += 29_000;
    await source.listTools();
    assert.deepEqual(source.listingCounts(), { later: 1, notes: 1 }, "no new listing during the backoff");
    await startNotesHttpServer(t, folder, "later", port);
    now += 1_000;
    const during = await source.listTools();
    assert.equal(during.some((tool) => tool.serverName === "later"), false, "the retry runs in the background");
    assert.equal(source.listingCounts().later, 2);
    const listed = await (async () => {
      for (let tries = 0; tries < 200; tries += 1) {
        const tools = await source.listTools();
        if (tools.some((tool) => tool.serverName === "later")) return tools;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return [];
    })();
    assert.equal(listed[0]?.name, "later__read_note", "servers keep their configured order");
    assert.equal(source.listingCounts().later, 2, "one listing at a time");
  });
});

describe("McpToolSource listing cache", () => {
  it("lists once per Worker, refreshes in the background after listingTtlMs, and lists now with refresh: true", async (t) => {
    const folder = notesServerFolder(t);
    let now = 5_000_000;
    const { source } = quietSource([notesStdioServer(folder)], {}, { now: () => now });
    const [first, second] = await Promise.all([source.listTools(), source.listTools()]);
    assert.equal(first.length, 9);
    assert.deepEqual(second.map((tool) => tool.name), first.map((tool) => tool.name));
    assert.deepEqual(source.listingCounts(), { notes: 1 }, "concurrent callers share one listing");
    now += 299_999;
    await source.listTools();
    assert.deepEqual(source.listingCounts(), { notes: 1 }, "within listingTtlMs the cache answers");
    now += 1;
    const stale = await source.listTools();
    assert.equal(stale.length, 9, "the earlier tools are returned while the refresh runs");
    assert.deepEqual(source.listingCounts(), { notes: 2 });
    await source.listTools({ refresh: true });
    assert.ok(source.listingCounts().notes! >= 2 && source.listingCounts().notes! <= 3);
    const before = source.listingCounts().notes!;
    await source.listTools({ refresh: true });
    assert.equal(source.listingCounts().notes, before + 1, "refresh: true lists again now");
    assert.equal(source.cachedTools().length, 9);
  });
});

describe("resource and prompt tools", () => {
  it("lists, reads and gets prompts as sorted Python-style JSON, refuses an unconfigured server, and declares their names", async (t) => {
    const folder = notesServerFolder(t);
    const server = await startNotesHttpServer(t, folder);
    const { source } = quietSource([server.config], { resourceAndPromptToolsEnabled: true });
    assert.deepEqual(source.declaredToolNames(), ["mcp_list_resources_and_prompts", "mcp_read_resource", "mcp_get_prompt"]);
    const tools = await source.listTools();
    assert.deepEqual(tools.slice(-3).map((tool) => [tool.name, tool.effect]), [["mcp_list_resources_and_prompts", "read"], ["mcp_read_resource", "read"], ["mcp_get_prompt", "read"]]);
    assert.deepEqual((tools.at(-1)?.parameters as { properties: { server: unknown } }).properties.server, { type: "string", enum: ["notes"], description: "Name of the MCP server." });
    const { events } = recordingEvents();
    const run = (name: string, argumentsValue: unknown) => source.executeDeferredToolCall(execution(name, argumentsValue, JSON.stringify({ resource_tool: name }), events));
    assert.equal(outputOf(await run("mcp_list_resources_and_prompts", { server: "notes" })),
      '{"prompts": [{"arguments": [{"name": "title", "required": true}], "description": "Summarize a note.", "name": "summarize"}], "resource_templates": [], '
      + '"resources": [{"description": "The welcome note.", "mimeType": "text/plain", "name": "welcome", "uri": "notes://welcome"}]}');
    assert.equal(outputOf(await run("mcp_read_resource", { server: "notes", uri: "notes://welcome" })),
      '{"contents": [{"mimeType": "text/plain", "text": "Hello from the notes server.", "uri": "notes://welcome"}]}');
    assert.equal(outputOf(await run("mcp_get_prompt", { server: "notes", name: "summarize", arguments: { title: "welcome" } })),
      '{"description": null, "messages": [{"content": {"text": "Summarize the note welcome.", "type": "text"}, "role": "user"}]}');
    await assert.rejects(run("mcp_read_resource", { server: "elsewhere", uri: "x" }), (error: unknown) => ToolExecutionError.isInstance(error) && error.message === "MCP server elsewhere is not configured; use one of notes");
    await assert.rejects(run("mcp_read_resource", { server: "notes", uri: "notes://missing" }), (error: unknown) => ToolExecutionError.isInstance(error) && /^MCP error -32602: Resource notes:\/\/missing not found$/.test(error.message));
    // The server answers with its own McpError's text, prefix and all: the model reads the prefix once.
    await assert.rejects(run("mcp_get_prompt", { server: "notes", name: "nope" }), (error: unknown) => {
      assert.ok(ToolExecutionError.isInstance(error));
      assert.equal(error.message, "MCP error -32602: Prompt nope not found");
      return true;
    });
  });
});
