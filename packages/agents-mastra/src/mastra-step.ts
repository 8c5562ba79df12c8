/**
 * One step of Mastra's loop: a single model call through `agent.stream`
 * with `maxSteps: 1`, its text streamed to the session's events, and what
 * the session needs from it (the model's message, its tool calls, usage).
 */
import type { Agent } from "@mastra/core/agent";
import type { ProcessInputStepArgs, ProcessInputStepResult } from "@mastra/core/processors";
import type { RequestContext } from "@mastra/core/request-context";
import type { AgentEventWriter } from "@perdure/agents";
import type { MastraModelMessage } from "./mastra-messages.ts";
import type { MastraTool } from "./mastra-tools.ts";

/** A tool call of the step, arguments as JSON text. */
export interface MastraStepToolCall {
  toolCallId: string;
  toolName: string;
  arguments: string;
}

/** What one model call of Mastra's loop produced. */
export interface MastraStep {
  /** The model's message, as Mastra returned it in `response.messages`. */
  assistantMessage: MastraModelMessage | undefined;
  toolCalls: MastraStepToolCall[];
  usage: { inputTokens?: number | undefined; outputTokens?: number | undefined; totalTokens?: number | undefined; reasoningTokens?: number | undefined; cachedInputTokens?: number | undefined };
  modelId: string | undefined;
  provider: string | undefined;
  responseId: string | undefined;
  finishReason: string | undefined;
}

/** The options of the step's `agent.stream` call that the runner chooses. */
export interface MastraStepOptions {
  clientTools: Record<string, MastraTool>;
  activeTools: string[];
  abortSignal: AbortSignal;
  requestContext: RequestContext;
  /** Mastra's hook before the model call; the runner uses it to hand Mastra the step's model wrapped for recording or replay. */
  prepareStep?: (args: ProcessInputStepArgs) => Promise<ProcessInputStepResult>;
}

function errorOf(value: unknown): Error {
  return value instanceof Error ? value : new Error(typeof value === "string" ? value : JSON.stringify(value));
}

/** The arguments without the metadata Mastra adds for its own use. */
function argumentsText(args: unknown): string {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return JSON.stringify(args ?? {});
  const rest: Record<string, unknown> = { ...args };
  delete rest.__mastraMetadata;
  return JSON.stringify(rest);
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * Runs one model call of `agent` on `input` and reads it. Throws when the
 * model call fails or a processor's tripwire stops it, so `RunModel` reruns
 * it; Mastra's own retries are off (`maxRetries: 0`), because the session
 * retries the Step.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any agent, whatever its tools, output and request context
export async function readMastraStep(agent: Agent<any, any, any, any>, input: MastraModelMessage[], options: MastraStepOptions, events: AgentEventWriter): Promise<MastraStep> {
  const output = await agent.stream(input as never, { ...options, maxSteps: 1, modelSettings: { maxRetries: 0 } });
  for await (const chunk of output.fullStream) {
    if (chunk.type === "text-delta") await events.textDelta(chunk.payload.text);
    else if (chunk.type === "reasoning-delta") await events.reasoningDelta(chunk.payload.text);
    else if (chunk.type === "error") throw errorOf(chunk.payload.error);
  }
  if (output.error !== undefined) throw output.error;
  const tripwire = output.tripwire;
  if (tripwire !== undefined) throw new Error(`a Mastra processor stopped the model call: ${tripwire.reason}`);
  const response = await output.response;
  const messages = (response.messages ?? []) as unknown as MastraModelMessage[];
  const toolCalls = (await output.toolCalls).map((chunk) => ({ toolCallId: chunk.payload.toolCallId, toolName: chunk.payload.toolName, arguments: argumentsText(chunk.payload.args) }));
  return {
    assistantMessage: messages.findLast((message) => message.role === "assistant"),
    toolCalls,
    usage: await output.usage,
    modelId: stringOrUndefined(response.modelId),
    provider: stringOrUndefined(response.modelProvider),
    responseId: stringOrUndefined(response.id),
    finishReason: stringOrUndefined(await output.finishReason),
  };
}
