/**
 * The runner a replay builds its session around: today's runner, calling
 * the replay model, whose tool calls run for real only when both the
 * recording and today's code say the effect is `read`; every other call is
 * answered with the recorded result and never runs.
 */
import type { AgentFrameworkRunner, DeferredToolExecution, DeferredToolOutcome, RecordedModelReplay, ReplayableAgentFrameworkRunner } from "../../contract/agent-framework-runner.ts";
import { ToolExecutionError } from "../../contract/tool-execution-error.ts";
import { outcomeUnknownToolResult } from "../../contract/values/result-texts.ts";
import type { SessionFixtureToolCall, SessionFixtureTurn } from "../../session/export/session-fixture.ts";
import type { ModelClient } from "../../stepwise/model-client.ts";
import { describeDifferences } from "./describe-differences.ts";
import { ReplayModelClient } from "./replay-model-client.ts";
import type { ReplayState } from "./replay-state.ts";

interface ModelSwappingRunner extends AgentFrameworkRunner<DeferredToolOutcome> {
  withModel(model: ModelClient): AgentFrameworkRunner<DeferredToolOutcome>;
}

/** Today's runner answered from `replay`: through `withRecordedModel` (the adapters), or `withModel` (the Stepwise runner). */
function replayingRunner(runner: AgentFrameworkRunner<DeferredToolOutcome>, replay: RecordedModelReplay): AgentFrameworkRunner<DeferredToolOutcome> | undefined {
  const recorded = (runner as Partial<ReplayableAgentFrameworkRunner>).withRecordedModel;
  if (typeof recorded === "function") return recorded.call(runner, replay) as AgentFrameworkRunner<DeferredToolOutcome>;
  const swapping = (runner as Partial<ModelSwappingRunner>).withModel;
  if (typeof swapping === "function") return swapping.call(runner, new ReplayModelClient(replay));
  return undefined;
}

/** Today's runner with the replay model and recorded tool results. */
export function createReplayRunner(runner: AgentFrameworkRunner<DeferredToolOutcome>, replay: RecordedModelReplay, turns: readonly SessionFixtureTurn[], state: ReplayState): AgentFrameworkRunner<DeferredToolOutcome> {
  const replaying = replayingRunner(runner, replay);
  if (replaying === undefined) {
    throw new TypeError("replaySession needs a runner whose model calls a recording can answer (withRecordedModel, or the Stepwise runner's withModel): the Stepwise runner and the AI SDK, OpenAI Agents SDK, Mastra and Claude Agent SDK adapters have one; this Flow's runner has neither");
  }
  const recordedCalls = new Map<string, SessionFixtureToolCall>(turns.flatMap((turn) => turn.tool_calls.map((call) => [call.tool_call_id, call] as const)));
  const wrapper = Object.create(replaying) as AgentFrameworkRunner<DeferredToolOutcome>;
  wrapper.executeDeferredToolCall = async (execution: DeferredToolExecution): Promise<DeferredToolOutcome> => {
    const call = execution.toolCall;
    const recorded = recordedCalls.get(call.toolCallId);
    const modelCall = state.modelCallsByTurn.get(call.turnId) ?? 0;
    const now = { tool_name: call.toolName, arguments: call.arguments, effect: call.effect };
    const differences = recorded === undefined ? [] : describeDifferences({ tool_name: recorded.tool_name, arguments: recorded.arguments, effect: recorded.effect }, now);
    if (recorded === undefined || differences.length > 0) {
      state.diverge({
        turnId: call.turnId, modelCall, step: "CallTool", kind: "tool_call",
        diff: recorded === undefined
          ? `${call.turnId}, tool call ${call.toolCallId} (CallTool): the recording has no such call; now ${call.toolName}(${call.arguments}) with effect ${call.effect}`
          : [`${call.turnId}, tool call ${call.toolCallId} (CallTool): the call differs from the recording`, ...differences].join("\n"),
      });
      throw new ToolExecutionError(`replay diverged at tool call ${call.toolCallId}`);
    }
    if (recorded.effect === "read" && call.effect === "read") {
      state.toolCallsRun.push(call.toolCallId);
      return replaying.executeDeferredToolCall.call(wrapper, execution);
    }
    state.toolCallsFromRecording.push(call.toolCallId);
    if (recorded.status === "failed") throw new ToolExecutionError(recorded.error ?? recorded.output ?? "the recorded call failed");
    return { output: recorded.output ?? outcomeUnknownToolResult };
  };
  return wrapper;
}
