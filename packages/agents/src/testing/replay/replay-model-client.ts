/**
 * A `ModelClient` that answers each call with the recorded response, after
 * checking that today's request is the recorded one; the first request that
 * differs (or a call the recording does not have) ends the replay with a
 * divergence.
 */
import { TerminalError } from "@perdure/engine";
import { agentUsageFromWire } from "../../contract/values/agent-usage.ts";
import type { SessionFixtureTurn } from "../../session/export/session-fixture.ts";
import type { ModelClient, ModelRequest, ModelResponse } from "../../stepwise/model-client.ts";
import { recordedModelRequest } from "../../stepwise/stepwise-agent-runner.ts";
import { describeDifferences } from "./describe-differences.ts";
import type { ReplayState } from "./replay-state.ts";

interface RecordedResponse {
  text?: string;
  tool_calls?: { tool_call_id: string; tool_name: string; arguments: string }[];
  usage?: unknown;
  provider?: string;
  api?: string;
  item?: unknown;
}

function responseOf(recorded: unknown): ModelResponse {
  const response = (recorded ?? {}) as RecordedResponse;
  return {
    text: response.text ?? "",
    toolCalls: (response.tool_calls ?? []).map((call) => ({ toolCallId: call.tool_call_id, toolName: call.tool_name, arguments: call.arguments })),
    usage: agentUsageFromWire(response.usage ?? {}),
    provider: response.provider ?? "replay",
    api: response.api ?? "replay",
    item: response.item ?? null,
  };
}

export class ReplayModelClient implements ModelClient {
  readonly description = "replayed model (answers from a recorded session)";
  private readonly turns: ReadonlyMap<string, SessionFixtureTurn>;
  private readonly state: ReplayState;

  constructor(turns: readonly SessionFixtureTurn[], state: ReplayState) {
    this.turns = new Map(turns.map((turn) => [turn.turn_id, turn]));
    this.state = state;
  }

  call(request: ModelRequest): Promise<ModelResponse> {
    const turn = this.turns.get(request.turnId);
    const callNumber = (this.state.modelCallsByTurn.get(request.turnId) ?? 0) + 1;
    this.state.modelCallsByTurn.set(request.turnId, callNumber);
    const recorded = turn?.model_calls[callNumber - 1];
    if (recorded === undefined) {
      const had = turn?.model_calls.length ?? 0;
      this.state.diverge({
        turnId: request.turnId, modelCall: callNumber, step: "RunModel", kind: "model_call_count",
        diff: `${request.turnId}: the agent made model call ${callNumber}, but the recording has ${had} model call${had === 1 ? "" : "s"} in this turn`,
      });
      return Promise.reject(new TerminalError(`replay diverged: ${request.turnId} made more model calls than recorded`));
    }
    const actual = recordedModelRequest(request);
    const expected = recorded.input_omitted ? { ...(recorded.request as Record<string, unknown>), input: undefined } : recorded.request;
    const differences = describeDifferences(expected, recorded.input_omitted ? { ...actual, input: undefined } : actual);
    if (differences.length > 0) {
      this.state.diverge({
        turnId: request.turnId, modelCall: callNumber, step: "RunModel", kind: "model_request",
        diff: [`${request.turnId}, model call ${callNumber} (RunModel): the agent sent the model a different request`, ...differences].join("\n"),
      });
      return Promise.reject(new TerminalError(`replay diverged at ${request.turnId} model call ${callNumber}`));
    }
    this.state.modelCalls += 1;
    return Promise.resolve(responseOf(recorded.response));
  }
}
