import type {
  AgentFrameworkRunner,
  AgentTurnContext,
  AgentTurnOutcome,
  DeferredToolExecution,
  DeferredToolOutcome,
  ToolInputRequested,
} from "../contract/agent-framework-runner.ts";
import { selectUnstoredToolCalls } from "../contract/unstored-tool-calls.ts";
import type { FrameworkMessage } from "../contract/values/agent-message.ts";
import type { AgentToolCall } from "../contract/values/agent-tool-call.ts";
import { emptyAgentUsage } from "../contract/values/agent-usage.ts";
import type { ToolEffect } from "../contract/values/tool-effect.ts";

/** What the script sees: the user texts of the session and the results of the previous response. */
export interface ScriptInput {
  turnId: string;
  modelCall: number;
  userTexts: string[];
  previousResults: AgentToolCall[];
  messages: AgentTurnContext["messages"];
}

export type ScriptReply =
  | { text: string }
  | { toolCalls: { name: string; arguments: Record<string, unknown> }[]; text?: string };

/** A test tool: its effect and what it does. */
export interface ScriptedTool {
  effect: ToolEffect;
  requiresApproval?: boolean;
  /** The output, or a `ToolInputRequested` to ask the user first (the call then runs again with `call.inputAnswers`). */
  execute(argumentsValue: Record<string, unknown>, call: DeferredToolExecution): Promise<string | ToolInputRequested>;
}

/**
 * A deterministic `AgentFrameworkRunner` for tests and benchmarks: replies
 * come from a script over committed state, tools from a table. It stores the
 * turn incrementally (tool results and model output in each
 * `ToolCallsRequested`), like the Stepwise loop, and streams a final answer
 * as one `text_delta`.
 *
 * @example
 * const runner = new ScriptedAgentRunner(
 *   (input) => (input.modelCall === 1 ? { toolCalls: [{ name: "lookup", arguments: { id: "7" } }] } : { text: "done" }),
 *   { lookup: { effect: "read", execute: async (args) => `found ${String(args.id)}` } },
 * );
 */
export class ScriptedAgentRunner implements AgentFrameworkRunner<DeferredToolOutcome> {
  readonly script: (input: ScriptInput) => ScriptReply;
  readonly tools: Readonly<Record<string, ScriptedTool>>;
  modelCalls = 0;

  constructor(script: (input: ScriptInput) => ScriptReply, tools: Readonly<Record<string, ScriptedTool>> = {}) {
    this.script = script;
    this.tools = tools;
  }

  buildUserMessage(text: string): FrameworkMessage {
    return { role: "user", text, frameworkItem: { type: "user_text", text } };
  }

  private resultMessages(calls: readonly AgentToolCall[]): FrameworkMessage[] {
    return calls.map((call) => ({
      role: "tool",
      text: call.output ?? "",
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      frameworkItem: { type: "tool_result", tool_call_id: call.toolCallId, tool_name: call.toolName, output: call.output ?? "" },
    }));
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    this.modelCalls += 1;
    const modelCall = turn.frameworkRunState === null ? 1 : (JSON.parse(turn.frameworkRunState) as { model_calls: number }).model_calls + 1;
    const userTexts = turn.messages.filter((message) => message.role === "user").map((message) => message.text);
    const reply = this.script({ turnId: turn.turnId, modelCall, userTexts, previousResults: selectUnstoredToolCalls(turn), messages: turn.messages });
    const results = this.resultMessages(selectUnstoredToolCalls(turn));
    const usage = { ...emptyAgentUsage(), inputTokens: 10, outputTokens: 5, totalTokens: 15, requests: 1 };
    if ("toolCalls" in reply) {
      const toolCalls = reply.toolCalls.map((call, index) => ({
        toolCallId: `${turn.turnId}-call-${modelCall}-${index}`,
        toolName: call.name,
        arguments: JSON.stringify(call.arguments),
        policy: turn.resolveToolPolicy(call.name, this.tools[call.name] === undefined ? undefined : {
          effect: this.tools[call.name]!.effect,
          ...(this.tools[call.name]!.requiresApproval === undefined ? {} : { requiresApproval: this.tools[call.name]!.requiresApproval! }),
        }),
      }));
      const output: FrameworkMessage = {
        role: "assistant",
        text: reply.text ?? "",
        frameworkItem: { type: "model_output", text: reply.text ?? "", tool_calls: toolCalls.map((call) => ({ id: call.toolCallId, name: call.toolName, arguments: call.arguments })) },
      };
      return { kind: "tool_calls_requested", frameworkRunState: JSON.stringify({ model_calls: modelCall }), toolCalls, usage, newMessages: [...results, output] };
    }
    await turn.events.textDelta(reply.text);
    const answer: FrameworkMessage = { role: "assistant", text: reply.text, frameworkItem: { type: "model_output", text: reply.text, tool_calls: [] } };
    return { kind: "turn_completed", newMessages: [...results, answer], usage };
  }

  async executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    const tool = this.tools[call.toolCall.toolName];
    if (tool === undefined) throw new Error(`unknown tool ${call.toolCall.toolName}`);
    const result = await tool.execute(JSON.parse(call.toolCall.arguments) as Record<string, unknown>, call);
    return typeof result === "string" ? { output: result } : result;
  }

  buildUnfinishedTurnMessages(turn: AgentTurnContext): FrameworkMessage[] {
    return this.resultMessages(selectUnstoredToolCalls(turn));
  }
}
