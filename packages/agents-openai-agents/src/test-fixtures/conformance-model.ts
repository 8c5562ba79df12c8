/**
 * The conformance tests' neutral model as an OpenAI Agents SDK `Model`: it
 * reads the latest user text and the turn's tool results from the input
 * items the SDK sends, asks the neutral script, and answers with the SDK's
 * output items.
 */
import { Usage, type AgentInputItem, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import type { ConformanceModel } from "@perdure/agents/testing";

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((part: { text?: string }) => part.text ?? "").join("") : "";
}

/** Counts `getResponse` calls; a scripted reply that throws fails the call as a provider error would. */
export class ConformanceSdkModel implements Model {
  readonly requests: ModelRequest[] = [];
  private readonly model: ConformanceModel;

  constructor(model: ConformanceModel) {
    this.model = model;
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const input: AgentInputItem[] = typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input;
    const lastUserIndex = input.findLastIndex((item) => "role" in item && item.role === "user");
    const lastUser = input[lastUserIndex] as { content?: unknown } | undefined;
    const sinceUser = input.slice(lastUserIndex + 1);
    const turnToolResults = sinceUser.flatMap((item) => {
      const result = item as { type?: string; name?: string; output?: { text?: string } | string };
      if (result.type !== "function_call_result") return [];
      return [{ toolName: result.name ?? "", output: typeof result.output === "string" ? result.output : result.output?.text ?? "" }];
    });
    const reply = await this.model.reply({ lastUserText: textOf(lastUser?.content), turnToolResults, ...(request.signal === undefined ? {} : { signal: request.signal }) });
    const usage = new Usage({ requests: 1, inputTokens: 20, outputTokens: 5, totalTokens: 25 });
    if (reply.kind === "text") {
      return { usage, output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: reply.text }] }] };
    }
    const users = input.filter((item) => "role" in item && item.role === "user").length;
    const modelCall = sinceUser.filter((item) => (item as { type?: string }).type === "function_call").length + 1;
    return { usage, output: [{ type: "function_call", callId: `call-u${users}-m${modelCall}`, name: reply.toolName, arguments: JSON.stringify(reply.arguments), status: "completed" }] };
  }

  // eslint-disable-next-line require-yield -- the conformance runner never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the conformance model does not stream");
  }
}
