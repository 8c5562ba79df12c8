/**
 * `replaySession`: runs today's agent code against a recorded session in a
 * private engine. Each model call is answered with the recorded response
 * once today's request matches the recorded one; tools run only when their
 * effect is `read`, the others answer from the recording. The report names
 * the first divergence, with a readable diff, or none.
 */
import { InvalidInputError } from "@perdure/engine";
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

/** Approves or rejects each pending approval as the recording did. */
async function answerApprovals(run: ReplayRun, turn: SessionFixtureTurn): Promise<void> {
  const [pending] = await run.environment.client.getAttributes(sessionId, run.flow.pendingInterrupts);
  for (const interrupt of pending ?? []) {
    if (interrupt.kind !== "approval") continue;
    const recorded = turn.tool_calls.find((call) => call.tool_call_id === interrupt.toolCallId);
    const approved = recorded !== undefined && recorded.status !== "rejected";
    await run.environment.client.invokeRPC(run.flow.resolveInterrupt, sessionId, { interruptId: interrupt.interruptId, approved }, { lockConflictRetryMs: 5_000 });
  }
}

/** Sends a turn's messages and waits for its end or a divergence; true when the turn ended. */
async function replayTurn(run: ReplayRun, turn: SessionFixtureTurn, number: number): Promise<boolean> {
  const { client } = run.environment;
  const [settings] = await client.getAttributes(sessionId, run.flow.sessionSettings);
  if (turn.session_settings !== null && JSON.stringify(settings ?? null) !== JSON.stringify(turn.session_settings)) {
    await client.invokeRPC(run.flow.updateSessionSettings, sessionId, { sessionSettings: turn.session_settings });
  }
  const [text = ""] = turn.user_messages;
  await client.invokeRPC(run.flow.sendUserMessage, sessionId, { text });
  const deadline = performance.now() + run.turnTimeoutMs;
  for (;;) {
    if (run.state.divergence !== null) return false;
    const [state] = await client.getAttributes(sessionId, run.flow.agentState);
    if (state !== undefined && state.turnCount >= number && state.activeTurnId === null) return true;
    await answerApprovals(run, turn);
    if (performance.now() > deadline) throw new Error(`replay of ${turn.turn_id} did not end within ${run.turnTimeoutMs} ms; the session is ${JSON.stringify(state)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
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
  const runner = createReplayRunner(parts.runner, new FixtureModelReplay(checked.turns, state), checked.turns, state);
  const flow = createAgentSessionFlow(runner, options.flow.flowType, parts.options);
  const engine = await PrivateEngine.start();
  let environment: AgentTestEnvironment | undefined;
  let turns = 0;
  try {
    environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow] });
    const run: ReplayRun = { environment, flow, state, turnTimeoutMs };
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
