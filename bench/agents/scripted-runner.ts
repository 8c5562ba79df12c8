import {
  emptyAgentUsage,
  type AgentFrameworkRunner,
  type AgentToolCall,
  type AgentTurnContext,
  type AgentTurnOutcome,
  type DeferredToolExecution,
  type FrameworkMessage,
  type ToolExecutionResult,
} from "@perdure/agents";

/**
 * Tells the benchmark, in process and for free, that a session's model call
 * produced the turn's final answer. The turn has not ended yet: RunModel still
 * writes two events and commits. The benchmark then confirms the commit.
 */
export class FinalAnswerSignals {
  private readonly waiting = new Map<string, () => void>();

  expect(sessionId: string): Promise<void> {
    return new Promise((resolve) => this.waiting.set(sessionId, resolve));
  }

  signal(sessionId: string): void {
    const resolve = this.waiting.get(sessionId);
    this.waiting.delete(sessionId);
    resolve?.();
  }
}

/** The tool every benchmark turn calls once. */
export const lookupToolName = "lookup_order";

/**
 * A deterministic runner whose model calls cost nothing, after the test
 * fixture `packages/agents/src/session/test-fixtures/scripted-agent-runner.ts`
 * with its script fixed: the first model call of a turn asks for one `read`
 * tool call, the second answers with the tool's output. Like that fixture
 * (and the Stepwise loop) it stores the turn incrementally: the tool call
 * request, then the tool result and the answer, and it sends the answer as one
 * `text_delta` event. Per turn it stores 4 messages: user, assistant (tool
 * call), tool result, assistant (answer).
 */
export class BenchScriptedRunner implements AgentFrameworkRunner {
  modelCalls = 0;
  toolCalls = 0;
  private readonly signals: FinalAnswerSignals;

  constructor(signals: FinalAnswerSignals) {
    this.signals = signals;
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
    const results = this.resultMessages(turn.toolCalls);
    const usage = { ...emptyAgentUsage(), inputTokens: 10, outputTokens: 5, totalTokens: 15, requests: 1 };
    if (modelCall === 1) {
      const toolCallId = `${turn.turnId}-call-1-0`;
      const argumentsText = JSON.stringify({ order_id: turn.turnId });
      const output: FrameworkMessage = {
        role: "assistant",
        text: "Let me look.",
        frameworkItem: { type: "model_output", text: "Let me look.", tool_calls: [{ id: toolCallId, name: lookupToolName, arguments: argumentsText }] },
      };
      return {
        kind: "tool_calls_requested",
        frameworkRunState: JSON.stringify({ model_calls: modelCall }),
        toolCalls: [{ toolCallId, toolName: lookupToolName, arguments: argumentsText, policy: turn.resolveToolPolicy(lookupToolName, { effect: "read" }) }],
        usage,
        newMessages: [...results, output],
      };
    }
    const text = `Answer: ${turn.toolCalls.map((call) => call.output).join(", ")}`;
    await turn.events.textDelta(text);
    const answer: FrameworkMessage = { role: "assistant", text, frameworkItem: { type: "model_output", text, tool_calls: [] } };
    this.signals.signal(turn.flowId);
    return { kind: "turn_completed", newMessages: [...results, answer], usage };
  }

  async executeDeferredToolCall(call: DeferredToolExecution): Promise<ToolExecutionResult> {
    if (call.toolCall.toolName !== lookupToolName) throw new Error(`unknown tool ${call.toolCall.toolName}`);
    this.toolCalls += 1;
    const argumentsValue = JSON.parse(call.toolCall.arguments) as { order_id: string };
    return { output: `order ${argumentsValue.order_id}: shipped` };
  }

  buildUnfinishedTurnMessages(turn: AgentTurnContext): FrameworkMessage[] {
    return this.resultMessages(turn.toolCalls);
  }
}
