import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { mcpAgentToolName, mcpToolNameMaxLength } from "./mcp-tool-names.ts";

describe("mcpAgentToolName", () => {
  it("joins server and tool with __ and replaces characters outside letters, digits, _ and -", () => {
    assert.equal(mcpAgentToolName("files", "read_file"), "files__read_file");
    assert.equal(mcpAgentToolName("my.files", "read file/v2"), "my_files__read_file_v2");
    assert.equal(mcpAgentToolName("tickets", "créer-ticket"), "tickets__cr_er-ticket");
  });

  it("shortens a name over 64 characters to 64, ending in a hash of the whole name", () => {
    const name = mcpAgentToolName("server", "t".repeat(80));
    assert.equal(name.length, 64);
    assert.match(name, /^server__t{47}_[0-9a-f]{8}$/);
    assert.equal(mcpAgentToolName("server", "t".repeat(56)), `server__${"t".repeat(56)}`, "64 characters stay as they are");
  });

  it("always gives 1 to 64 allowed characters, deterministically, keeps valid short names, and keeps long names apart", () => {
    const anyName = fc.string({ unit: "grapheme", minLength: 1, maxLength: 100 });
    fc.assert(fc.property(anyName, anyName, (server, tool) => {
      const name = mcpAgentToolName(server, tool);
      assert.match(name, /^[A-Za-z0-9_-]{1,64}$/);
      assert.equal(name, mcpAgentToolName(server, tool));
      const joined = `${server}__${tool}`;
      if (/^[A-Za-z0-9_-]+$/.test(joined) && joined.length <= mcpToolNameMaxLength) assert.equal(name, joined);
    }), { numRuns: 500 });
    fc.assert(fc.property(fc.string({ minLength: 60, maxLength: 90 }), fc.string({ minLength: 60, maxLength: 90 }), (first, second) => {
      fc.pre(first !== second);
      assert.notEqual(mcpAgentToolName("s", first), mcpAgentToolName("s", second));
    }), { numRuns: 500 });
  });
});
