import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { subAgentTree } from "./sub-agents.ts";

describe("the inspector's sub-agent tree", () => {
  it("is absent for a session with no parent and no children, whether the fields are missing, null or empty", () => {
    assert.equal(subAgentTree({}), undefined);
    assert.equal(subAgentTree({ parentSession: null, childSessions: [] }), undefined);
  });

  it("names the parent of a sub-agent session, with no children", () => {
    const parent = { sessionId: "writer-1", toolCallId: "call-7", depth: 1 };
    assert.deepEqual(subAgentTree({ parentSession: parent }), { parent, children: [] });
  });

  it("lists the children by session ID, whatever order they came in, and keeps a parent of its own", () => {
    const tree = subAgentTree({
      parentSession: { sessionId: "root", toolCallId: "call-1", depth: 1 },
      childSessions: [
        { sessionId: "root.research.b", agent: "researcher" },
        { sessionId: "root.research.a", agent: "researcher" },
      ],
    });
    assert.deepEqual(tree?.children.map((child) => child.sessionId), ["root.research.a", "root.research.b"]);
    assert.equal(tree?.parent?.sessionId, "root");
  });
});
