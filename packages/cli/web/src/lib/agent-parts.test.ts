import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { UIMessage } from "ai";
import { describeMcpToolProgress, latestMcpToolProgress, mcpToolProgressOf } from "./agent-parts.ts";

type Part = UIMessage["parts"][number];

describe("MCP tool progress parts in the chat", () => {
  const data = { toolCallId: "c1", toolName: "notes__list_notes", server: "notes", progress: 2, attempt: 1, total: 3, message: "read shipping" };

  it("reads the data of a data-agent-mcp-tool-progress part, and nothing from other or malformed parts", () => {
    assert.deepEqual(mcpToolProgressOf({ type: "data-agent-mcp-tool-progress", id: "c1", data } as Part), data);
    assert.equal(mcpToolProgressOf({ type: "data-agent-tool-task", id: "c1", data } as Part), undefined);
    assert.equal(mcpToolProgressOf({ type: "data-agent-mcp-tool-progress", id: "c1", data: { ...data, progress: "2" } } as Part), undefined);
    assert.equal(mcpToolProgressOf({ type: "text", text: "hi" } as Part), undefined);
  });

  it("describes progress with its total and message when the server gave them", () => {
    assert.equal(describeMcpToolProgress(data), "2 of 3 · read shipping");
    assert.equal(describeMcpToolProgress({ ...data, total: null }), "2 · read shipping");
    assert.equal(describeMcpToolProgress({ ...data, message: null }), "2 of 3");
    assert.equal(describeMcpToolProgress({ ...data, total: null, message: "" }), "2");
  });

  it("names the attempt of a call retried after a crash, whose progress starts again", () => {
    assert.equal(describeMcpToolProgress({ ...data, attempt: 1 }), "2 of 3 · read shipping");
    assert.equal(describeMcpToolProgress({ ...data, progress: 1, attempt: 2 }), "attempt 2 · 1 of 3 · read shipping");
  });

  it("shows the latest attempt's progress per call: an older attempt's part never moves the bar back", () => {
    const part = (progress: number, attempt: number, toolCallId = "c1"): Part => ({ type: "data-agent-mcp-tool-progress", id: toolCallId, data: { ...data, toolCallId, progress, attempt } }) as Part;
    const latest = latestMcpToolProgress([part(1, 1), part(2, 1), part(1, 2), part(2, 1), part(3, 1, "c2"), { type: "text", text: "hi" } as Part]);
    assert.deepEqual([...latest.values()].map((progress) => [progress.toolCallId, progress.progress, progress.attempt]), [["c1", 1, 2], ["c2", 3, 1]]);
  });
});
