/**
 * A `ScriptedAgentRunner` that reports what a real model client reports for
 * tracing: `modelCallMetadata`, usage with cached and reasoning tokens, and
 * optionally a failed first attempt of a chosen model call.
 */
import type { AgentTurnContext, AgentTurnOutcome } from "../../contract/agent-framework-runner.ts";
import { ScriptedAgentRunner, type ScriptedTool, type ScriptInput, type ScriptReply } from "../../testing/scripted-agent-runner.ts";
import type { AgentUsage } from "../../contract/values/agent-usage.ts";

export interface TracedSessionRunnerOptions {
  /** Throw from this many first `runModelStep` calls. */
  failingModelCalls?: number;
  /** The usage every model call reports. */
  usage?: AgentUsage;
}

export const tracedRunnerUsage: AgentUsage = { inputTokens: 120, outputTokens: 30, totalTokens: 150, reasoningTokens: 8, cachedInputTokens: 64, requests: 1 };

export class TracedSessionRunner extends ScriptedAgentRunner {
  private remainingFailures: number;
  private readonly usage: AgentUsage;

  constructor(script: (input: ScriptInput) => ScriptReply, tools: Readonly<Record<string, ScriptedTool>>, options: TracedSessionRunnerOptions = {}) {
    super(script, tools);
    this.remainingFailures = options.failingModelCalls ?? 0;
    this.usage = options.usage ?? tracedRunnerUsage;
  }

  override async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    if (this.remainingFailures > 0) {
      this.remainingFailures -= 1;
      const error = new Error("the model provider answered 503");
      error.name = "ProviderUnavailableError";
      throw error;
    }
    const outcome = await super.runModelStep(turn);
    return {
      ...outcome,
      usage: this.usage,
      modelCallMetadata: { requestModel: "gpt-test", responseModel: "gpt-test-2026-11", providerName: "openai", responseId: `resp-${turn.turnId}-${turn.attempt}`, finishReasons: [outcome.kind === "turn_completed" ? "stop" : "tool_calls"] },
    };
  }
}
