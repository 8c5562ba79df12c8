/**
 * The `ModelClient` contract: one model call per `RunModel`, from committed
 * input items, with text and reasoning streamed to `AgentEvents`.
 */
import type { ModelCallMetadata } from "../contract/agent-framework-runner.ts";
import type { AgentEventWriter } from "../contract/values/agent-event.ts";
import type { AgentUsage } from "../contract/values/agent-usage.ts";

/** A JSON Schema object describing a tool's arguments. */
export type JsonSchema = Record<string, unknown>;

/** A tool as the model sees it. */
export interface ModelToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** Settings passed through to the model unchanged. */
export interface ModelSettings {
  temperature?: number;
  maxOutputTokens?: number;
  reasoningEffort?: string;
  providerOptions?: Record<string, Record<string, unknown>>;
}

/** Stored `framework_item` of a user message. */
export interface UserTextItem {
  type: "user_text";
  text: string;
}

/** A tool call inside a stored model output. */
export interface ModelOutputToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
}

/**
 * Stored `framework_item` of a model response. `item` is the provider's own
 * message, replayed unchanged to the same `provider` and `api`; any other
 * model gets `text` and `tool_calls` only.
 */
export interface ModelOutputItem {
  type: "model_output";
  provider: string;
  api: string;
  item: unknown;
  text: string;
  tool_calls: ModelOutputToolCall[];
}

/** Stored `framework_item` of a tool result. */
export interface ToolResultItem {
  type: "tool_result";
  tool_call_id: string;
  tool_name: string;
  output: string;
}

/** One item of the model input, exactly as stored. */
export type StepwiseInputItem = UserTextItem | ModelOutputItem | ToolResultItem;

/** What a model client gets for one call. */
export interface ModelRequest {
  flowId: string;
  turnId: string;
  /** The `RunModel` attempt. */
  attempt: number;
  instructions: string;
  /** The conversation, oldest first: user texts, model outputs and tool results. */
  input: StepwiseInputItem[];
  /** Tools offered in this call; empty when the model must answer. */
  tools: ModelToolDefinition[];
  /**
   * `"required"` forces a tool call (a planning turn's first model call with
   * `planningToolChoice: "required"`); otherwise the model chooses.
   * @default "auto"
   */
  toolChoice?: "auto" | "required";
  modelSettings: ModelSettings | undefined;
  /** Stream text and reasoning deltas here. */
  events: AgentEventWriter;
  signal: AbortSignal;
}

/** A tool call the model made. */
export interface ModelToolCall {
  toolCallId: string;
  toolName: string;
  /** JSON text of the arguments, as the model wrote them. */
  arguments: string;
}

/** What one model call returned. */
export interface ModelResponse {
  text: string;
  toolCalls: ModelToolCall[];
  usage: AgentUsage;
  /** Identify the model output for replay: same provider and api get `item` back unchanged. */
  provider: string;
  api: string;
  /** The provider's own message (JSON), stored and replayed unchanged. */
  item: unknown;
  metadata?: ModelCallMetadata;
}

/** Makes one model call. Throw for a failure: the `RunModel` attempt fails and reruns. */
export interface ModelClient {
  call(request: ModelRequest): Promise<ModelResponse>;
  /**
   * Which model this client calls, for people: `perdure dev` prints it at
   * start, so a user who set a key sees that it took effect. A Perdure
   * extension of the contract's `ModelClient`.
   * @default none
   */
  readonly description?: string;
  /**
   * The input tokens of `request` by the model's own count, for compaction's
   * estimate. A Perdure extension; without it Stepwise estimates 4
   * characters of the request's JSON per token.
   * @default none
   */
  estimateInputTokens?(request: ModelRequest): number;
}
