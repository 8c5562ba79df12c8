import { emptyAgentUsage } from "../contract/values/agent-usage.ts";
import type { ModelClient, ModelRequest, ModelResponse, ModelToolCall, ToolResultItem } from "./model-client.ts";

/** What a script returns for one model call. */
export interface ScriptedModelReply {
  text?: string;
  reasoning?: string;
  /** `arguments` may be an object (sent as JSON) or JSON text. */
  toolCalls?: { name: string; arguments?: unknown; id?: string }[];
}

/** Options of {@link ScriptedModelClient}. */
export interface ScriptedModelClientOptions {
  /** Requests kept in `requests`, newest last. @default 100 */
  maxRecordedRequests?: number;
  /** The provider name stored with its outputs. @default "scripted" */
  provider?: string;
  /** What `perdure dev` and logs call this model. @default "scripted model (<provider>)" */
  description?: string;
}

/**
 * A `ModelClient` that answers from a script over the request, so an agent
 * runs with no model key: demos, tutorials and tests. Keep the script
 * deterministic: a crashed `RunModel` reruns it.
 *
 * @example
 * const model = new ScriptedModelClient((request) => ({ text: `You said: ${ScriptedModelClient.userTexts(request).at(-1)}` }));
 */
export class ScriptedModelClient implements ModelClient {
  readonly requests: ModelRequest[] = [];
  private readonly script: (request: ModelRequest) => ScriptedModelReply | Promise<ScriptedModelReply>;
  private readonly maxRecordedRequests: number;
  private readonly provider: string;
  readonly description: string;

  constructor(script: (request: ModelRequest) => ScriptedModelReply | Promise<ScriptedModelReply>, options: ScriptedModelClientOptions = {}) {
    this.script = script;
    this.maxRecordedRequests = options.maxRecordedRequests ?? 100;
    this.provider = options.provider ?? "scripted";
    this.description = options.description ?? `scripted model (${this.provider})`;
  }

  /** Every user text of the request, oldest first. */
  static userTexts(request: ModelRequest): string[] {
    return request.input.flatMap((item) => (item.type === "user_text" ? [item.text] : []));
  }

  /** The tool results since the latest user text: what the current turn's tools returned. */
  static toolResults(request: ModelRequest): { toolCallId: string; toolName: string; output: string }[] {
    const lastUser = request.input.map((item) => item.type).lastIndexOf("user_text");
    return request.input
      .slice(lastUser + 1)
      .filter((item): item is ToolResultItem => item.type === "tool_result")
      .map((item) => ({ toolCallId: item.tool_call_id, toolName: item.tool_name, output: item.output }));
  }

  async call(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    if (this.requests.length > this.maxRecordedRequests) this.requests.splice(0, this.requests.length - this.maxRecordedRequests);
    const reply = await this.script(request);
    if (reply.reasoning !== undefined && reply.reasoning !== "") await request.events.reasoningDelta(reply.reasoning);
    const text = reply.text ?? "";
    // Stream word by word, as a real model would.
    for (const piece of text.match(/\S+\s*|\s+/g) ?? []) await request.events.textDelta(piece);
    const lastUser = request.input.map((item) => item.type).lastIndexOf("user_text");
    const modelCallInTurn = request.input.slice(lastUser + 1).filter((item) => item.type === "model_output").length + 1;
    const toolCalls: ModelToolCall[] = (reply.toolCalls ?? []).map((call, index) => ({
      toolCallId: call.id ?? `call-${request.turnId}-${modelCallInTurn}-${index}`,
      toolName: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
    }));
    const outputTokens = Math.max(1, Math.ceil(text.length / 4));
    return {
      text,
      toolCalls,
      usage: { ...emptyAgentUsage(), inputTokens: 0, outputTokens, totalTokens: outputTokens, requests: 1 },
      provider: this.provider,
      api: "scripted",
      item: { text, reasoning: reply.reasoning ?? null, tool_calls: toolCalls.map((call) => ({ id: call.toolCallId, name: call.toolName, arguments: call.arguments })) },
      metadata: { requestModel: "scripted", responseModel: "scripted", providerName: this.provider },
    };
  }
}
