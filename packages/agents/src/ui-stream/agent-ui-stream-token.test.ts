import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createTemporarySqliteStore } from "@perdure/engine/testing";
import { initialAgentUIStreamState } from "./agent-ui-stream-state.ts";
import { AgentUIStreamTokenCodec, isAgentUIStreamTokenRejection, maxAgentUIStreamTokenLength, type AgentUIStreamPosition } from "./agent-ui-stream-token.ts";

const temporary = createTemporarySqliteStore();
const other = createTemporarySqliteStore();
after(async () => {
  await temporary.dispose();
  await other.dispose();
});

const position: AgentUIStreamPosition = {
  turnId: "turn-2",
  turnOrigin: "engine-origin",
  after: "engine-after",
  partsSent: 2,
  partsSentEventIndex: 41,
  state: { ...initialAgentUIStreamState(), started: true, step: { executionId: "7", attempt: 2 }, stepOpen: true, textPartId: "text-3", nextPartNumber: 4 },
};

describe("UI stream resume tokens", () => {
  it("round-trip a position of one session, signed with a key of the store", async () => {
    const codec = await AgentUIStreamTokenCodec.forStore(temporary.store);
    const token = codec.encode("s1", position);
    assert.match(token, /^u1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.deepEqual(codec.decode("s1", token), position);
    assert.equal(await AgentUIStreamTokenCodec.forStore(temporary.store), codec);
  });

  it("reject a forged, altered, foreign or other session's token with a reason", async () => {
    const codec = await AgentUIStreamTokenCodec.forStore(temporary.store);
    const foreign = await AgentUIStreamTokenCodec.forStore(other.store);
    const token = codec.encode("s1", position);
    const [version, body, signature] = token.split(".");
    const altered = `${version}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body ?? "", "base64url").toString()), turnId: "turn-1" })).toString("base64url")}.${signature}`;
    const rejections = [
      codec.decode("s2", token),
      codec.decode("s1", altered),
      codec.decode("s1", foreign.encode("s1", position)),
      codec.decode("s1", "not a token"),
      codec.decode("s1", `${token}.extra`),
    ];
    for (const result of rejections) assert.ok(isAgentUIStreamTokenRejection(result), JSON.stringify(result));
    assert.deepEqual(rejections.map((result) => (isAgentUIStreamTokenRejection(result) ? result.rejection : "")), [
      "the resume token belongs to another session",
      "the resume token was not issued by this store (forged or corrupt)",
      "the resume token was not issued by this store (forged or corrupt)",
      "the resume token is not a UI stream token of this version",
      "the resume token is not a UI stream token of this version",
    ]);
  });

  it("reject a token over 64 KiB without reading it, and never issue one", async () => {
    const codec = await AgentUIStreamTokenCodec.forStore(temporary.store);
    const tooLong = codec.decode("s1", "u1.".padEnd(maxAgentUIStreamTokenLength + 1, "A"));
    assert.ok(isAgentUIStreamTokenRejection(tooLong));
    assert.match(tooLong.rejection, /65537 characters, over the limit of 65536/);
    // A response with thousands of tool calls: the state's lists shrink, oldest first, until the token fits.
    const ids = Array.from({ length: 6000 }, (_, index) => `call-${index}-${Math.random().toString(36).slice(2)}`);
    const huge = { ...position, state: { ...position.state, shownToolCallIds: ids, toolStepExecutionIds: ids, shownApprovalIds: ids.map((id) => `${id}-approval`) } };
    const token = codec.encode("s1", huge);
    assert.ok(token.length <= maxAgentUIStreamTokenLength);
    assert.ok(token.startsWith("u1z."), "a large state is deflated");
    const decoded = codec.decode("s1", token);
    assert.ok(!isAgentUIStreamTokenRejection(decoded));
    assert.equal(decoded.state.shownToolCallIds.at(-1), ids.at(-1), "the newest entries are kept");
    assert.ok(decoded.state.shownToolCallIds.length > 0 && decoded.state.shownToolCallIds.length < ids.length);
  });
});
