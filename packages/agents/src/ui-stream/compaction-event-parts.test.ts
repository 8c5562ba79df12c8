/**
 * Compaction in the AI SDK UI message stream: the compaction events and the
 * summary call's `usage_recorded` are event data outside the assistant
 * message's steps, and a resumed stream still knows the compaction's Step.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AgentEvent, AgentEventType } from "../contract/values/agent-event.ts";
import { planAgentEventParts } from "./agent-event-parts.ts";
import { initialAgentUIStreamState, parseAgentUIStreamState, type AgentUIStreamState } from "./agent-ui-stream-state.ts";

function event(type: AgentEventType, stepExecutionId: string, payload: Record<string, unknown> = {}): AgentEvent {
  return { type, turnId: "turn-2", attempt: 1, stepExecutionId, payload };
}

function chunkTypes(events: readonly AgentEvent[], start: AgentUIStreamState): { types: string[]; state: AgentUIStreamState } {
  let state = start;
  const types: string[] = [];
  for (const value of events) {
    const planned = planAgentEventParts(state, value);
    for (const part of planned.parts) {
      assert.ok(part.kind === "chunk", `only chunks, got ${part.kind}`);
      types.push(part.chunk.type === "data-agent-event" ? `event:${part.chunk.data.type}` : part.chunk.type);
    }
    state = planned.state;
  }
  return { types, state };
}

const usage = { recorded: { requests: 1 }, session: { requests: 3 } };

void test("the compaction events and the summary call's usage are event data, and the model call after them opens the first step", () => {
  const started = chunkTypes([event("turn_started", "await-1", { sequence: 5 })], initialAgentUIStreamState());
  const compaction = chunkTypes([
    event("compaction_started", "compact-1", { through_sequence: 4 }),
    event("usage_recorded", "compact-1", usage),
    event("compaction_finished", "compact-1", { generation: 1, through_sequence: 4 }),
  ], started.state);
  assert.deepEqual(compaction.types, ["event:compaction_started", "event:usage_recorded", "event:compaction_finished"]);
  assert.equal(compaction.state.step, null, "no step opened for the summary call");

  // A stream resumed from a token written between the compaction's events still keeps its usage out of the steps.
  const resumed = parseAgentUIStreamState(JSON.parse(JSON.stringify(chunkTypes([event("compaction_started", "compact-1", { through_sequence: 4 })], started.state).state)));
  assert.ok(resumed !== undefined);
  assert.deepEqual(chunkTypes([event("usage_recorded", "compact-1", usage)], resumed).types, ["event:usage_recorded"]);

  const model = chunkTypes([event("text_delta", "model-1", { text: "Hi" }), event("usage_recorded", "model-1", usage)], compaction.state);
  assert.deepEqual(model.types, ["start-step", "text-start", "text-delta", "text-end", "event:usage_recorded"]);
});

void test("a token written before compaction had parts still parses, with no compaction Step", () => {
  const older: Partial<AgentUIStreamState> = { ...initialAgentUIStreamState(), started: true };
  delete older.compactionStepExecutionId;
  assert.equal("compactionStepExecutionId" in older, false);
  const parsed = parseAgentUIStreamState(older);
  assert.ok(parsed !== undefined);
  assert.deepEqual(chunkTypes([event("usage_recorded", "model-1", usage)], parsed).types, ["start-step", "event:usage_recorded"]);
});
