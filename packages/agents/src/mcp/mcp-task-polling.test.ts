import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mcpTaskContinuation, nextMcpTaskPollIntervalSeconds, readMcpTaskContinuation } from "./mcp-task-polling.ts";

describe("MCP task polling", () => {
  it("polls at the server's interval rounded up, or double the previous one up to a minute when that is longer", () => {
    assert.equal(nextMcpTaskPollIntervalSeconds(5_000, 1), 5);
    assert.equal(nextMcpTaskPollIntervalSeconds(2_500, 1), 3);
    assert.equal(nextMcpTaskPollIntervalSeconds(200, 1), 2);
    assert.equal(nextMcpTaskPollIntervalSeconds(200, 4), 8);
    assert.equal(nextMcpTaskPollIntervalSeconds(1_000, 45), 60);
    assert.equal(nextMcpTaskPollIntervalSeconds(120_000, 45), 120, "a slower server interval is kept");
    assert.equal(nextMcpTaskPollIntervalSeconds(undefined, 3), 6);
  });

  it("keeps the last seen status in the continuation", () => {
    assert.equal(readMcpTaskContinuation(mcpTaskContinuation("working")), "working");
    assert.equal(readMcpTaskContinuation(undefined), null);
    assert.equal(readMcpTaskContinuation("question-7"), null);
  });
});
