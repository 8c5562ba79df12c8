/**
 * A deterministic runner for UI stream tests. Like the session tests'
 * ScriptedAgentRunner, replies come from a script over committed state and
 * tools from a table, and the turn is stored incrementally; unlike it, every
 * reply streams its reasoning and text as several deltas, and a hook can
 * pause between deltas so a test can cut a connection mid-step.
 */
import type {
  AgentFrameworkRunner,
  AgentTurnContext,
  AgentTurnOutcome,
  DeferredToolExecution,
  DeferredToolOutcome,
  ToolInputRequested,
} from "../../contract/agent-framework-runner.ts";
import { selectUnstoredToolCalls } from "../../contract/unstored-tool-calls.ts";
import type { FrameworkMessage } from "../../contract/values/agent-message.ts";
import type { AgentToolCall } from "../../contract/values/agent-tool-call.ts";
import { emptyAgentUsage } from "../../contract/values/agent-usage.ts";
import type { ToolEffect } from "../../contract/values/tool-effect.ts";

/** What the script sees. */
export interface StreamingScriptInput {
  turnId: string;
  /** 1 for the turn's first model call. */
  modelCall: number;
  /** The `RunModel` attempt. */
  attempt: number;
  /** The latest user message. */
  userText: string;
  /** The previous response's calls, final. */
  previousResults: AgentToolCall[];
}

/** One model reply: streamed reasoning and text, and tool calls. */
export interface StreamingScriptReply {
  reasoning?: string[];
  /** The answer's text in the deltas it streams as. */
  text?: string[];
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  /**
   * On this attempt, write this turn-ending event after the deltas and then
   * fail the attempt, as a model call whose end reached the Stream but never
   * committed.
   */
  failAfterWritingOnAttempt?: { attempt: number; event: "turn_completed" | "turn_failed" };
  /** Fail these attempts after the deltas, as a model call that errors. */
  failOnAttempts?: readonly number[];
}

/** A test tool. */
export interface StreamingScriptedTool {
  effect: ToolEffect;
  requiresApproval?: boolean;
  /** Text the tool writes to the event Stream while it runs (tool output, not the model's). */
  liveText?: string[];
  /** The tool's output, or a question to ask before it takes any effect (answers arrive in `call.inputAnswers`). */
  execute(argumentsValue: Record<string, unknown>, call: DeferredToolExecution): Promise<string | ToolInputRequested>;
}

/** Called before each delta a model call streams; may pause. */
export type DeltaHook = (info: { flowId: string; turnId: string; modelCall: number; attempt: number; kind: "text" | "reasoning"; index: number }) => Promise<void>;

interface RunState {
  model_calls: number;
}

/** The runner; `onDelta` may be replaced by a test at any time. */
export class StreamingScriptedRunner implements AgentFrameworkRunner<DeferredToolOutcome> {
  readonly script: (input: StreamingScriptInput) => StreamingScriptReply;
  readonly tools: Readonly<Record<string, StreamingScriptedTool>>;
  onDelta: DeltaHook | undefined;

  constructor(script: (input: StreamingScriptInput) => StreamingScriptReply, tools: Readonly<Record<string, StreamingScriptedTool>> = {}, onDelta?: DeltaHook) {
    this.script = script;
    this.tools = tools;
    this.onDelta = onDelta;
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
    const modelCall = turn.frameworkRunState === null ? 1 : (JSON.parse(turn.frameworkRunState) as RunState).model_calls + 1;
    const userText = turn.messages.filter((message) => message.role === "user").at(-1)?.text ?? "";
    const reply = this.script({ turnId: turn.turnId, modelCall, attempt: turn.attempt, userText, previousResults: selectUnstoredToolCalls(turn) });
    for (const [index, delta] of (reply.reasoning ?? []).entries()) {
      await this.onDelta?.({ flowId: turn.flowId, turnId: turn.turnId, modelCall, attempt: turn.attempt, kind: "reasoning", index });
      await turn.events.reasoningDelta(delta);
    }
    for (const [index, delta] of (reply.text ?? []).entries()) {
      await this.onDelta?.({ flowId: turn.flowId, turnId: turn.turnId, modelCall, attempt: turn.attempt, kind: "text", index });
      await turn.events.textDelta(delta);
    }
    if (reply.failOnAttempts?.includes(turn.attempt) === true) throw new Error(`model call attempt ${turn.attempt} failed`);
    if (reply.failAfterWritingOnAttempt?.attempt === turn.attempt) {
      const event = reply.failAfterWritingOnAttempt.event;
      await turn.events.write(event, event === "turn_completed" ? { message_count: 1 } : { error: "forged failure that never commits" });
      throw new Error(`attempt ${turn.attempt} wrote ${event} and failed before its commit`);
    }
    const text = (reply.text ?? []).join("");
    const results = this.resultMessages(selectUnstoredToolCalls(turn));
    const usage = { ...emptyAgentUsage(), inputTokens: 10, outputTokens: 5, totalTokens: 15, requests: 1 };
    const toolCalls = (reply.toolCalls ?? []).map((call, index) => {
      const tool = this.tools[call.name];
      return {
        toolCallId: `${turn.turnId}-call-${modelCall}-${index}`,
        toolName: call.name,
        arguments: JSON.stringify(call.arguments),
        policy: turn.resolveToolPolicy(call.name, tool === undefined ? undefined : {
          effect: tool.effect,
          ...(tool.requiresApproval === undefined ? {} : { requiresApproval: tool.requiresApproval }),
        }),
      };
    });
    const output: FrameworkMessage = {
      role: "assistant",
      text,
      frameworkItem: { type: "model_output", text, tool_calls: toolCalls.map((call) => ({ id: call.toolCallId, name: call.toolName, arguments: call.arguments })) },
    };
    if (toolCalls.length > 0) {
      return { kind: "tool_calls_requested", frameworkRunState: JSON.stringify({ model_calls: modelCall } satisfies RunState), toolCalls, usage, newMessages: [...results, output] };
    }
    return { kind: "turn_completed", newMessages: [...results, output], usage };
  }

  async executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    const tool = this.tools[call.toolCall.toolName];
    if (tool === undefined) throw new Error(`unknown tool ${call.toolCall.toolName}`);
    for (const delta of tool.liveText ?? []) await call.events.textDelta(delta);
    const outcome = await tool.execute(JSON.parse(call.toolCall.arguments) as Record<string, unknown>, call);
    return typeof outcome === "string" ? { output: outcome } : outcome;
  }

  buildUnfinishedTurnMessages(turn: AgentTurnContext): FrameworkMessage[] {
    return this.resultMessages(selectUnstoredToolCalls(turn));
  }
}
