import assert from "node:assert/strict";
import { it } from "node:test";
import { InvalidInputError } from "@perdure/engine";
import { resolveAgentSessionOptions } from "../session-options.ts";
import { messageRolloverMaxBytesPerCommit, messageRolloverMaxChunksPerCommit } from "./message-storage-options.ts";

it("message storage options default to a window of 64, chunks of 32 and 1 MiB, and 1,000 retained messages", () => {
  const resolved = resolveAgentSessionOptions({});
  assert.deepEqual(
    [resolved.messageWindowSize, resolved.messageChunkSize, resolved.messageChunkMaxBytes, resolved.retainedMessageLimit],
    [64, 32, 1_048_576, 1000],
  );
  assert.equal(resolveAgentSessionOptions({ retainedMessageLimit: null }).retainedMessageLimit, null);
  assert.deepEqual([messageRolloverMaxChunksPerCommit, messageRolloverMaxBytesPerCommit], [4, 8_388_608]);
  assert.equal(resolveAgentSessionOptions({ messageChunkMaxBytes: 8_388_608 }).messageChunkMaxBytes, 8_388_608);
});

it("bad message storage options are refused with errors that name the value", () => {
  const refused: [Record<string, unknown>, RegExp][] = [
    [{ messageWindowSize: 16 }, /^agent session option messageWindowSize 16 is invalid: use at least messageChunkSize \(32\)/],
    [{ messageWindowSize: 0 }, /messageWindowSize 0 is invalid: use a positive integer/],
    [{ messageChunkSize: 2.5 }, /messageChunkSize 2.5 is invalid: use a positive integer/],
    [{ messageChunkMaxBytes: 8_388_609 }, /messageChunkMaxBytes 8388609 is invalid: use an integer from 1 to 8388608/],
    [{ messageChunkMaxBytes: 0 }, /messageChunkMaxBytes 0 is invalid/],
    [{ retainedMessageLimit: -1 }, /retainedMessageLimit -1 is invalid: use a positive integer, or null to keep every message/],
    [{ retainedMessageLimit: "all" }, /retainedMessageLimit "all" is invalid/],
  ];
  for (const [options, message] of refused) {
    assert.throws(() => resolveAgentSessionOptions(options), (error: unknown) => error instanceof InvalidInputError && message.test(error.message), JSON.stringify(options));
  }
});
