/**
 * The recording as a model: `FixtureModelReplay` answers each model call
 * with the recorded response, after checking that today's request is the
 * recorded one; the first request that differs (or a call the recording
 * does not have) ends the replay with a divergence. `ReplayModelClient` is
 * the same for the Stepwise runner's `ModelClient`.
 */
import { TerminalError } from "@perdure/engine";
import type { RecordedModelReplay } from "../../contract/agent-framework-runner.ts";
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

function withoutInput(request: unknown): unknown {
  return typeof request === "object" && request !== null ? { ...(request as Record<string, unknown>), input: undefined } : request;
}

/** Answers model calls, in any runner's recorded form, from a fixture's turns. */
export class FixtureModelReplay implements RecordedModelReplay {
  private readonly turns: ReadonlyMap<string, SessionFixtureTurn>;
  private readonly state: ReplayState;
  private readonly steer: (turnId: string) => Promise<boolean>;

  /** `steer` steers the next turn in when `turnId` asks for a call past its recorded ones and steering ended it; true when it did. */
  constructor(turns: readonly SessionFixtureTurn[], state: ReplayState, steer: (turnId: string) => Promise<boolean> = () => Promise.resolve(false)) {
    this.turns = new Map(turns.map((turn) => [turn.turn_id, turn]));
    this.state = state;
    this.steer = steer;
  }

  async respond(turnId: string, request: unknown): Promise<unknown> {
    const turn = this.turns.get(turnId);
    const callNumber = (this.state.modelCallsByTurn.get(turnId) ?? 0) + 1;
    const recorded = turn?.model_calls[callNumber - 1];
    if (recorded === undefined && (await this.steer(turnId))) {
      // Not a call of the recording: the retried RunModel sees the steer and ends the turn without one.
      throw new Error(`replay: ${turnId} was steered here in the recording; the next attempt ends the turn`);
    }
    this.state.modelCallsByTurn.set(turnId, callNumber);
    if (recorded === undefined) {
      const had = turn?.model_calls.length ?? 0;
      this.state.diverge({
        turnId, modelCall: callNumber, step: "RunModel", kind: "model_call_count",
        diff: `${turnId}: the agent made model call ${callNumber}, but the recording has ${had} model call${had === 1 ? "" : "s"} in this turn`,
      });
      throw new TerminalError(`replay diverged: ${turnId} made more model calls than recorded`);
    }
    const expected = recorded.input_omitted ? withoutInput(recorded.request) : recorded.request;
    const differences = describeDifferences(expected, recorded.input_omitted ? withoutInput(request) : request);
    if (differences.length > 0) {
      this.state.diverge({
        turnId, modelCall: callNumber, step: "RunModel", kind: "model_request",
        diff: [`${turnId}, model call ${callNumber} (RunModel): the agent sent the model a different request`, ...differences].join("\n"),
      });
      throw new TerminalError(`replay diverged at ${turnId} model call ${callNumber}`);
    }
    this.state.modelCalls += 1;
    return recorded.response;
  }
}

/** The Stepwise runner's model in a replay: each call answered by a {@link FixtureModelReplay}. */
export class ReplayModelClient implements ModelClient {
  readonly description = "replayed model (answers from a recorded session)";
  private readonly replay: RecordedModelReplay;

  constructor(replay: RecordedModelReplay) {
    this.replay = replay;
  }

  async call(request: ModelRequest): Promise<ModelResponse> {
    return responseOf(await this.replay.respond(request.turnId, recordedModelRequest(request)));
  }
}
