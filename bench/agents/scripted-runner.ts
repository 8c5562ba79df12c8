import type { AgentTurnContext, AgentTurnOutcome } from "@perdure/agents";
import { ScriptedAgentRunner } from "@perdure/agents/testing";

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
 * The test kit's `ScriptedAgentRunner` with the benchmark's script: the first
 * model call of a turn asks for one `read` tool call, the second answers with
 * the tool's output. Per turn it stores 4 messages: user, assistant (tool
 * call), tool result, assistant (answer). It signals each final answer.
 */
export class BenchScriptedRunner extends ScriptedAgentRunner {
  toolCalls = 0;
  private readonly signals: FinalAnswerSignals;

  constructor(signals: FinalAnswerSignals) {
    const tools = {
      [lookupToolName]: {
        effect: "read" as const,
        execute: async (argumentsValue: Record<string, unknown>) => {
          this.toolCalls += 1;
          return `order ${String(argumentsValue.order_id)}: shipped`;
        },
      },
    };
    super((input) => input.modelCall === 1
      ? { text: "Let me look.", toolCalls: [{ name: lookupToolName, arguments: { order_id: input.turnId } }] }
      : { text: `Answer: ${input.previousResults.map((call) => call.output).join(", ")}` }, tools);
    this.signals = signals;
  }

  override async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const outcome = await super.runModelStep(turn);
    if (outcome.kind === "turn_completed") this.signals.signal(turn.flowId);
    return outcome;
  }
}
