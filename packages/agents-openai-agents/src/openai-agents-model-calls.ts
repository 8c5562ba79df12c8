/**
 * The OpenAI Agents SDK's model calls, recorded and replayed: every model
 * the runner's SDK run resolves is wrapped, so each call's request and
 * response are kept as JSON for the session's `ModelCalls`, and a replay
 * answers a call from the recording instead of calling the model.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { Usage, type Model, type ModelProvider, type ModelRequest, type ModelResponse, type StreamEvent } from "@openai/agents";
import type { RecordedModelCall, RecordedModelReplay } from "@perdure/agents";

/** The model call of one `RunModel`: its turn, the replay answering it (if any), and what was recorded. */
export interface ModelCallScope {
  turnId: string;
  replay: RecordedModelReplay | undefined;
  recorded: RecordedModelCall | undefined;
}

/** The `RunModel` the SDK's current model call belongs to. */
export const modelCallScope = new AsyncLocalStorage<ModelCallScope>();

function json<T>(value: T): T {
  return JSON.parse(JSON.stringify(value ?? null)) as T;
}

/** A model request as the session records it: what the model is sent, without the signal and tracing handles. */
export function recordedOpenAiAgentsRequest(request: ModelRequest): Record<string, unknown> {
  return json({
    system_instructions: request.systemInstructions ?? null,
    input: request.input,
    tools: request.tools,
    model_settings: request.modelSettings,
    output_type: request.outputType,
    handoffs: request.handoffs,
    prompt: request.prompt ?? null,
  });
}

interface RecordedResponse {
  output?: ModelResponse["output"];
  usage?: Record<string, unknown>;
  response_id?: string | null;
}

function recordedResponse(response: ModelResponse): RecordedResponse {
  return json({ output: response.output, usage: json(response.usage) as unknown as Record<string, unknown>, response_id: response.responseId ?? null });
}

function responseOf(recorded: unknown): ModelResponse {
  const response = (recorded ?? {}) as RecordedResponse;
  return {
    output: response.output ?? [],
    usage: Usage.fromJSON((response.usage ?? {}) as never),
    ...(typeof response.response_id === "string" ? { responseId: response.response_id } : {}),
  };
}

/** A model that records each call in the current scope, or answers it from the scope's replay without calling `resolve()`'s model. */
export class RecordedSdkModel implements Model {
  private readonly resolve: () => Promise<Model>;

  constructor(resolve: () => Promise<Model>) {
    this.resolve = resolve;
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const scope = modelCallScope.getStore();
    if (scope?.replay !== undefined) return responseOf(await scope.replay.respond(scope.turnId, recordedOpenAiAgentsRequest(request)));
    const response = await (await this.resolve()).getResponse(request);
    if (scope !== undefined) scope.recorded = { request: recordedOpenAiAgentsRequest(request), response: recordedResponse(response) };
    return response;
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    yield* (await this.resolve()).getStreamedResponse(request);
  }
}

/** A provider whose models record (or replay) their calls; the named model is resolved only when a call goes to it. */
export function recordingModelProvider(provider: ModelProvider): ModelProvider {
  return {
    getModel: (modelName?: string) => Promise.resolve(new RecordedSdkModel(async () => provider.getModel(modelName))),
  };
}
