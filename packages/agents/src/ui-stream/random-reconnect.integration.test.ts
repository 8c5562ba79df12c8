/**
 * One long scripted turn, read back through the AI SDK chat client with the
 * connection cut at seeded random points: dropped and continued exactly,
 * dropped and replayed, or closed cleanly and replayed. Every reconstruction
 * must equal the stored transcript, and every exact continuation must add up
 * to the uncut stream, part for part.
 *
 * `npm test` makes 50 cuts from a seed that changes each day (UTC);
 * `npm run test:soak` makes 200. PERDURE_RECONNECT_SEED=<n> replays a seed,
 * PERDURE_RECONNECT_CUTS=<n> sets the number of cuts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { UIMessage } from "ai";
import type { StreamingScriptInput, StreamingScriptReply, StreamingScriptedTool } from "./test-fixtures/streaming-scripted-runner.ts";
import { partsOf, plain } from "./test-fixtures/test-chat.ts";
import { startUIStreamHarness } from "./test-fixtures/ui-stream-harness.ts";

function nonNegativeIntegerFrom(name: string, fallback: number): number {
  const text = process.env[name] ?? "";
  if (text === "") return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name}=${JSON.stringify(text)} is invalid: use a non-negative integer`);
  return value;
}

const seed = nonNegativeIntegerFrom("PERDURE_RECONNECT_SEED", Math.floor(Date.now() / 86_400_000));
const cutCount = Math.max(1, nonNegativeIntegerFrom("PERDURE_RECONNECT_CUTS", 50));
const modelCalls = 4;

/** mulberry32: a small seeded generator, so a failure replays. */
function seededRandom(start: number): () => number {
  let state = start >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function words(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}${index} `);
}

/** Three model calls that each stream text and call two read tools, then an answer. */
function longTurn(input: StreamingScriptInput): StreamingScriptReply {
  if (input.modelCall < modelCalls) {
    return {
      text: words(`step${input.modelCall}-word`, 8),
      toolCalls: [
        { name: "lookup", arguments: { key: `a${input.modelCall}` } },
        { name: "lookup", arguments: { key: `b${input.modelCall}` } },
      ],
    };
  }
  return { text: words("answer-word", 12) };
}

const lookup: StreamingScriptedTool = {
  effect: "read",
  liveText: ["tool ", "output"],
  execute: async (args) => `value of ${String(args.key)}`,
};

void test(`a long turn cut at ${cutCount} random points is rebuilt exactly every time`, { timeout: 300_000 }, async (t) => {
  const harness = await startUIStreamHarness(longTurn, { lookup });
  t.after(() => harness.dispose());
  await harness.sessions.start("s1");
  const live = harness.chat("s1");
  await live.sendMessage({ text: "Work through it" });
  await live.waitUntilSettled();
  assert.deepEqual(live.finishReasons, ["stop"]);
  const stored = await harness.storedAssistantMessage("s1", "turn-1");
  assert.deepEqual(plain(live.assistantMessage), stored);
  const full = partsOf(live.responses[0]?.chunks ?? []);
  const userMessage = live.messages[0] as UIMessage;
  const firstToken = live.responses[0]?.chunks[1];
  assert.equal(firstToken?.type, "data-agent-resume-token");
  const turnToken = firstToken?.type === "data-agent-resume-token" ? (firstToken.data as string) : "";

  t.diagnostic(`seed ${seed}, ${cutCount} cuts; PERDURE_RECONNECT_SEED=${seed} PERDURE_RECONNECT_CUTS=${cutCount} replays them`);
  const random = seededRandom(seed);
  const modes = ["drop-continue", "drop-replay", "close-replay"] as const;
  const tally = { "drop-continue": 0, "drop-replay": 0, "close-replay": 0 };
  for (let cut = 0; cut < cutCount; cut += 1) {
    const afterParts = 1 + Math.floor(random() * (full.length - 1));
    const mode = modes[Math.floor(random() * modes.length)] ?? "drop-continue";
    tally[mode] += 1;
    const chat = harness.chat("s1", { messages: [userMessage], resumeToken: turnToken });
    harness.server.cutNextStream({ afterParts, mode: mode === "close-replay" ? "close" : "drop" });
    await chat.resumeStream();
    await chat.waitUntilSettled();
    const beforeCut = partsOf(chat.responses[0]?.chunks ?? []);
    assert.equal(beforeCut.length, afterParts, `cut ${cut}: ${afterParts} parts before the cut`);
    chat.continueOnReconnect = mode === "drop-continue";
    await chat.resumeStream();
    await chat.waitUntilSettled();
    const context = `cut ${cut} of seed ${seed} (${mode} after ${afterParts} of ${full.length} parts)`;
    assert.equal(chat.status, "ready", context);
    const afterCut = partsOf(chat.responses[1]?.chunks ?? []);
    assert.deepEqual(mode === "drop-continue" ? [...beforeCut, ...afterCut] : afterCut, full, context);
    assert.deepEqual(chat.messages.map((message) => message.role), ["user", "assistant"], context);
    assert.deepEqual(plain(chat.assistantMessage), stored, context);
  }
  t.diagnostic(`${full.length} parts; cuts by mode: ${JSON.stringify(tally)}`);
  if (cutCount >= 50) assert.ok(Object.values(tally).every((count) => count > 0), `seed ${seed} cut in every mode: ${JSON.stringify(tally)}`);
});
