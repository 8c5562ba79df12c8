/**
 * `replaySession`: runs today's agent code against a recorded session in a
 * private engine. Each model call is answered with the recorded response
 * once today's request matches the recorded one; tools run only when their
 * effect is `read`, the others answer from the recording. The report names
 * the first divergence, with a readable diff, or none.
 */
import { InvalidInputError } from "@perdure/engine";
import type { AgentInterrupt } from "../../contract/values/agent-interrupt.ts";
import { durableWaitTimerId } from "../../session/built-in-tools/durable-wait-timer.ts";
import { agentSessionFlowParts, createAgentSessionFlow, type AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { checkSessionFixture, type SessionFixtureTurn } from "../../session/export/session-fixture.ts";
import { AgentTestEnvironment } from "../agent-test-environment.ts";
import { PrivateEngine } from "../private-engine.ts";
import type { ReplayReport } from "./replay-divergence.ts";
import { FixtureModelReplay } from "./replay-model-client.ts";
import { createReplayRunner } from "./replay-runner.ts";
import { ReplayState } from "./replay-state.ts";

/** Options of {@link replaySession}. */
export interface ReplaySessionOptions {
  /** The agent's session Flow, as today's code builds it (`createStepwiseAgentSessionFlow`). */
  flow: AgentSessionFlow;
  /** How long one turn may take before the replay gives up with an error. @default 60000 */
  turnTimeoutMs?: number;
}

function resolveTurnTimeoutMs(options: ReplaySessionOptions): number {
  const timeoutMs = options.turnTimeoutMs ?? 60_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new InvalidInputError(`replaySession turnTimeoutMs ${String(options.turnTimeoutMs)} is invalid: use a positive number of milliseconds`);
  return timeoutMs;
}

const sessionId = "replayed-session";

interface ReplayRun {
  environment: AgentTestEnvironment;
  flow: AgentSessionFlow;
  state: ReplayState;
  turnTimeoutMs: number;
}

/** The recorded answer of a question, or null to decline it as the recording did. */
function recordedAnswer(turn: SessionFixtureTurn, interrupt: AgentInterrupt): string | null {
  const call = turn.tool_calls.find((candidate) => candidate.tool_call_id === interrupt.toolCallId);
  if (call === undefined) return null;
  if (interrupt.interruptId === interrupt.toolCallId) {
    // ask_user: the answer is the call's result.
    if (call.status !== "succeeded" || call.output === null) return null;
    const result = JSON.parse(call.output) as { answer?: unknown };
    return typeof result.answer === "string" ? result.answer : null;
  }
  const questionNumber = Number(/-input-(\d+)$/.exec(interrupt.interruptId)?.[1] ?? "0");
  const answer = call.input_answers?.[questionNumber - 1];
  return answer?.resolution === "answered" ? answer.answer : null;
}

/** Answers each pending approval and question as the recording did. */
async function answerInterrupts(run: ReplayRun, turn: SessionFixtureTurn): Promise<void> {
  const { client } = run.environment;
  const [pending] = await client.getAttributes(sessionId, run.flow.pendingInterrupts);
  for (const interrupt of pending ?? []) {
    if (interrupt.kind === "approval") {
      const recorded = turn.tool_calls.find((call) => call.tool_call_id === interrupt.toolCallId);
      const approved = recorded !== undefined && recorded.status !== "rejected";
      await client.invokeRPC(run.flow.resolveInterrupt, sessionId, { interruptId: interrupt.interruptId, approved }, { lockConflictRetryMs: 5_000 });
      continue;
    }
    const answer = recordedAnswer(turn, interrupt);
    if (answer === null) await client.invokeRPC(run.flow.resolveInterrupt, sessionId, { interruptId: interrupt.interruptId, approved: false }, { lockConflictRetryMs: 5_000 });
    else await client.invokeRPC(run.flow.answerQuestion, sessionId, { interruptId: interrupt.interruptId, answer }, { lockConflictRetryMs: 5_000 });
  }
}

/** Ends each `durable_wait` of the turn now: the recording already holds what came after it. */
async function endWaits(run: ReplayRun): Promise<void> {
  const records = await run.environment.client.readFlowState(sessionId, (reader) => reader.list(run.flow.agentToolCalls));
  for (const { value } of records) {
    if (value.status === "waiting_for_timer") await run.environment.client.skipTimer(sessionId, durableWaitTimerId(value.toolCallId));
  }
}

/** Starts a turn as the recording's started: a message (in plan mode for a planning turn) or a plan approval. Steered turns start from `steerNextTurn`. */
async function startTurn(run: ReplayRun, turn: SessionFixtureTurn): Promise<void> {
  const { client } = run.environment;
  if (turn.started_by === "steer") return;
  if (turn.started_by === "plan_execution") {
    const revision = turn.plan_revision ?? 0;
    if (!(await client.invokeRPC(run.flow.executePlan, sessionId, { revision }, { lockConflictRetryMs: 5_000 }))) {
      throw new Error(`replay of ${turn.turn_id}: the session refused to execute plan revision ${revision}, which the recording executed`);
    }
    return;
  }
  const [text = ""] = turn.user_messages;
  await client.invokeRPC(run.flow.sendUserMessage, sessionId, { text, planMode: turn.interaction_mode === "planning" });
}

/** Sends a turn's messages and waits for its end or a divergence; true when the turn ended. */
async function replayTurn(run: ReplayRun, turn: SessionFixtureTurn, number: number): Promise<boolean> {
  const { client } = run.environment;
  const [settings] = await client.getAttributes(sessionId, run.flow.sessionSettings);
  if (turn.started_by !== "steer" && turn.session_settings !== null && JSON.stringify(settings ?? null) !== JSON.stringify(turn.session_settings)) {
    await client.invokeRPC(run.flow.updateSessionSettings, sessionId, { sessionSettings: turn.session_settings });
  }
  await startTurn(run, turn);
  const deadline = performance.now() + run.turnTimeoutMs;
  for (;;) {
    if (run.state.divergence !== null) return false;
    const [state] = await client.getAttributes(sessionId, run.flow.agentState);
    // A turn that steering ended is followed at once by the next one.
    if (state !== undefined && (state.turnCount > number || (state.turnCount === number && state.activeTurnId === null))) return true;
    await answerInterrupts(run, turn);
    await endWaits(run);
    if (performance.now() > deadline) throw new Error(`replay of ${turn.turn_id} did not end within ${run.turnTimeoutMs} ms; the session is ${JSON.stringify(state)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The steer of a recorded turn that steering ended: when the agent asks for
 * one model call more than the turn recorded, the next turn's messages are
 * steered in, and the call is refused (retried, it finds the steer and ends
 * the turn without a model call).
 */
function steerHook(run: () => ReplayRun | undefined, turns: readonly SessionFixtureTurn[]): (turnId: string) => Promise<boolean> {
  const steered = new Set<string>();
  return async (turnId) => {
    const index = turns.findIndex((turn) => turn.turn_id === turnId);
    const next = turns[index + 1];
    const current = run();
    if (index === -1 || next?.started_by !== "steer" || current === undefined) return false;
    if (!steered.has(turnId)) {
      steered.add(turnId);
      for (const text of next.user_messages) await current.environment.client.invokeRPC(current.flow.steerUserMessage, sessionId, { messageId: null, text, planMode: next.interaction_mode === "planning" });
    }
    return true;
  };
}

/**
 * Replays a recorded session (a fixture from `perdure export` or
 * `exportSession`) against today's agent code and reports the first
 * divergence: a different model request (instructions, tools and their
 * descriptions and schemas, input), a different number of model calls in a
 * turn, or a tool call that differs. Runs in a private engine of its own.
 *
 * @example
 * const report = await replaySession(JSON.parse(readFileSync("session-1.fixture.json", "utf8")), { flow: supportAgentFlow });
 * assert.equal(report.divergence, null, report.divergence?.diff);
 */
export async function replaySession(fixture: unknown, options: ReplaySessionOptions): Promise<ReplayReport> {
  const checked = checkSessionFixture(fixture);
  const parts = agentSessionFlowParts(options?.flow);
  if (parts === undefined) throw new InvalidInputError("replaySession needs { flow }: a session Flow that createAgentSessionFlow (or createStepwiseAgentSessionFlow) built");
  const turnTimeoutMs = resolveTurnTimeoutMs(options);
  const state = new ReplayState();
  let run: ReplayRun | undefined;
  const runner = createReplayRunner(parts.runner, new FixtureModelReplay(checked.turns, state, steerHook(() => run, checked.turns)), checked.turns, state);
  const flow = createAgentSessionFlow(runner, options.flow.flowType, parts.options);
  const engine = await PrivateEngine.start();
  let environment: AgentTestEnvironment | undefined;
  let turns = 0;
  try {
    environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow] });
    run = { environment, flow, state, turnTimeoutMs };
    const firstSettings = checked.turns[0]?.session_settings ?? null;
    await environment.client.start(flow, sessionId, firstSettings === null ? {} : { session_settings: firstSettings });
    for (const [index, turn] of checked.turns.entries()) {
      if (!(await replayTurn(run, turn, index + 1))) break;
      const made = state.modelCallsByTurn.get(turn.turn_id) ?? 0;
      if (made < turn.model_calls.length) {
        state.diverge({
          turnId: turn.turn_id, modelCall: made, step: "RunModel", kind: "model_call_count",
          diff: `${turn.turn_id}: the turn ended after ${made} model call${made === 1 ? "" : "s"}; the recording has ${turn.model_calls.length}`,
        });
        break;
      }
      turns += 1;
    }
  } finally {
    await environment?.close();
    await engine.stop();
  }
  return {
    sessionId: checked.session_id,
    turns,
    modelCalls: state.modelCalls,
    toolCallsRun: [...state.toolCallsRun],
    toolCallsFromRecording: [...state.toolCallsFromRecording],
    divergence: state.divergence,
  };
}
