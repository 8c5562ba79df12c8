/**
 * Plain Server-Sent Events and the browser snapshot, over real HTTP on
 * loopback, read the way an `EventSource` reads them: frames with `id` and
 * `data`, and `Last-Event-ID` on reconnect.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentEventJson } from "./agent-ui-message-types.ts";
import type { StreamingScriptInput, StreamingScriptReply } from "./test-fixtures/streaming-scripted-runner.ts";
import { startUIStreamHarness } from "./test-fixtures/ui-stream-harness.ts";

interface ServerSentEvent {
  id: string;
  data: AgentEventJson;
}

/** A frame of another event type than `message`, which `EventSource.onmessage` never receives. */
interface NamedFrame {
  event: string;
  data: unknown;
}

/** Reads events until `isLast` says so, or `timeoutMs` passes, then disconnects. */
async function readEvents(
  url: string,
  headers: Record<string, string>,
  isLast: (event: ServerSentEvent, count: number) => boolean,
  timeoutMs = 10_000,
  namedFrames: NamedFrame[] = [],
): Promise<ServerSentEvent[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const response = await fetch(url, { headers, signal: abort.signal });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  const reader = response.body?.getReader();
  assert.ok(reader !== undefined);
  const decoder = new TextDecoder();
  const events: ServerSentEvent[] = [];
  let buffered = "";
  try {
    for (;;) {
      const next = await reader.read().catch((error: unknown) => {
        if (abort.signal.aborted) return { done: true as const, value: undefined };
        throw error;
      });
      if (next.done) return events;
      buffered += decoder.decode(next.value, { stream: true });
      const frames = buffered.split("\n\n");
      buffered = frames.pop() ?? "";
      for (const frame of frames) {
        const fields = Object.fromEntries(frame.split("\n").filter((line) => !line.startsWith(":")).map((line) => [line.slice(0, line.indexOf(": ")), line.slice(line.indexOf(": ") + 2)]));
        if (fields.data === undefined) continue;
        if (fields.event !== undefined && fields.event !== "message") {
          namedFrames.push({ event: fields.event, data: JSON.parse(fields.data) });
          continue;
        }
        events.push({ id: fields.id ?? "", data: JSON.parse(fields.data) as AgentEventJson });
        if (isLast(events.at(-1) as ServerSentEvent, events.length)) return events;
      }
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

function answerSlowly(input: StreamingScriptInput): StreamingScriptReply {
  return { text: input.turnId === "turn-1" ? ["Hi."] : ["One ", "two ", "three."] };
}

describe("plain Server-Sent Events", () => {
  it("the snapshot leaves out Step-only fields and its token replays the active turn; Last-Event-ID resumes after the last event, over the query parameter", async () => {
    const harness = await startUIStreamHarness(answerSlowly);
    const gate = harness.gate();
    harness.runner.onDelta = async ({ turnId, index }) => {
      if (turnId === "turn-2" && index === 2) await gate.pass();
    };
    try {
      await harness.sessions.start("s1", { initialMessage: "hello" });
      await harness.waitForTurnEnd("s1", 1);
      await harness.sessions.sendUserMessage("s1", "count");
      await gate.waitUntilReached();
      const snapshot = (await (await fetch(`${harness.server.baseUrl}/sessions/s1/snapshot`)).json()) as Record<string, unknown> & { resume_token: string; messages: Record<string, unknown>[]; state: Record<string, unknown> };
      assert.equal(snapshot.state.active_turn_id, "turn-2");
      assert.ok(snapshot.messages.length === 3 && snapshot.messages.every((message) => !("framework_item" in message)));
      assert.deepEqual(Object.keys(snapshot).sort(), [
        "context_summary", "messages", "pending_interrupts", "plan", "queued_message_count", "queued_messages", "resume_token", "session_settings", "state", "steered_messages", "tool_calls", "usage",
      ]);
      assert.notEqual(snapshot.resume_token, "");

      const eventsUrl = `${harness.server.baseUrl}/sessions/s1/events?resumeToken=${encodeURIComponent(snapshot.resume_token)}`;
      const namedFrames: NamedFrame[] = [];
      const first = await readEvents(eventsUrl, {}, (_event, count) => count === 2, 10_000, namedFrames);
      assert.deepEqual(first.map((event) => event.data.type), ["turn_started", "text_delta"]);
      assert.equal(typeof first[0]?.data.payload, "string");
      assert.deepEqual(JSON.parse(first[1]?.data.payload ?? ""), { text: "One " });
      gate.open();
      // An EventSource sends the last id it saw; the stale query parameter must not win.
      const rest = await readEvents(eventsUrl, { "last-event-id": first.at(-1)?.id ?? "" }, (event) => event.data.type === "turn_completed", 10_000, namedFrames);
      const stored = (await harness.session.client.readStream("s1", harness.flow.agentEvents, { limit: 1000 })).messages.filter((message) => message.value.turnId === "turn-2");
      // Each event's data is exactly the contract's AgentEvent wire JSON: no field of ours, such as a write time.
      assert.deepEqual([...first, ...rest].map((event) => event.data), stored.map(({ value: event }) => ({
        type: event.type, turn_id: event.turnId, attempt: event.attempt, step_execution_id: event.stepExecutionId, payload: JSON.stringify(event.payload),
      })));
      assert.deepEqual(namedFrames, [], "without includeWriteTimes the stream sends nothing but the events");

      // Opted in, a frame of its own event type says when each event was written; the events stay the same.
      const timedFrames: NamedFrame[] = [];
      const timed = await readEvents(`${eventsUrl}&writeTimes=1`, {}, (event) => event.data.type === "turn_completed", 10_000, timedFrames);
      assert.deepEqual(timed, [...first, ...rest]);
      const times = Object.assign({}, ...timedFrames.map((frame) => {
        assert.equal(frame.event, "perdure-write-times");
        return frame.data as Record<string, string>;
      })) as Record<string, string>;
      assert.deepEqual(times, Object.fromEntries(stored.map((message) => [message.token, message.writtenAt.toISOString()])));
    } finally {
      await harness.dispose();
    }
  });

  it("a token the engine rejects gets a 400, from the header or the query", async () => {
    const harness = await startUIStreamHarness(answerSlowly);
    try {
      await harness.sessions.start("s1", { initialMessage: "hello" });
      await harness.sessions.start("s2", { initialMessage: "hello" });
      await harness.waitForTurnEnd("s1", 1);
      await harness.waitForTurnEnd("s2", 1);
      const foreign = (await harness.session.client.readStream("s2", harness.flow.agentEvents, { limit: 1 })).messages[0]?.token ?? "";
      for (const [headers, query] of [[{ "last-event-id": foreign }, ""], [{}, `?resumeToken=${encodeURIComponent("forged.token")}`], [{ "last-event-id": "x".repeat(5000) }, ""]] as const) {
        const response = await fetch(`${harness.server.baseUrl}/sessions/s1/events${query}`, { headers });
        assert.equal(response.status, 400);
        assert.match(await response.text(), /load the snapshot again/);
      }
      const idle = (await (await fetch(`${harness.server.baseUrl}/sessions/s1/snapshot`)).json()) as { resume_token: string };
      const events = await readEvents(`${harness.server.baseUrl}/sessions/s1/events?resumeToken=${encodeURIComponent(idle.resume_token)}`, {}, () => true, 300);
      assert.deepEqual(events, [], "an idle session's snapshot token continues after its newest event");
    } finally {
      await harness.dispose();
    }
  });
});
