/**
 * `CompactContext`: one `summarizeContext` call for the messages after the
 * current summary through `through_sequence`, stored as `ContextSummary`,
 * then back to `RunModel`. It has `RunModel`'s timeouts, retries and failure
 * route; a crash reruns only the summary call.
 */
import { defineStep, moveTo, TerminalError, type StepDefinition } from "@perdure/engine";
import type { AgentFrameworkRunner, ContextSummaryRequest, ContextSummaryResult } from "../../contract/agent-framework-runner.ts";
import { emptyAgentUsage } from "../../contract/values/agent-usage.ts";
import type { ContextSummary } from "../../contract/values/context-summary.ts";
import { loadedMessages } from "../build-turn-context.ts";
import { createEventWriter, withBackgroundHeartbeat } from "../event-writer.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { isoNow, readState } from "../session-operations.ts";
import { turnSessionSettingsOf } from "../settings/turn-session-settings.ts";
import { AgentStepType } from "../step-types.ts";
import { applyRetention } from "../messages/apply-retention.ts";
import { moveToModelInputStep, requireModelInputLoaded } from "../messages/model-input-loads.ts";
import { compactContextInputFromWire } from "./compaction-trigger.ts";
import { modelCallExecuteOptions, recordUsage } from "./run-model.ts";
import { traceModelCall } from "../../tracing/chat-span.ts";

const compactionMethods = ["estimateInputTokens", "selectCompactionCutoff", "summarizeContext"] as const;

/** A compaction policy needs all three optional runner methods; throws a `TypeError` naming the missing ones. */
export function checkCompactionRunner(runner: AgentFrameworkRunner<unknown>): void {
  const missing = compactionMethods.filter((method) => typeof runner[method] !== "function");
  if (missing.length > 0) {
    throw new TypeError(`the compaction option needs a runner with ${compactionMethods.join(", ")}; this runner has no ${missing.join(", ")}`);
  }
}

function checkSummary(result: ContextSummaryResult): void {
  if (typeof result?.summary !== "string") {
    throw new TerminalError(`summarizeContext returned ${JSON.stringify(result)?.slice(0, 200)}; return { summary, usage }`);
  }
}

/** `CompactContext`: summarizes through `through_sequence` and moves back to `RunModel`. */
export function createCompactContextStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence, runner, options } = environment;
  return defineStep<unknown>(AgentStepType.CompactContext, {
    load: [persistence.agentMessages.all()],
    failureRoute: AgentStepType.RecordTurnFailure,
    executeOptions: modelCallExecuteOptions,
    execute: async (context, rawInput) => {
      const state = readState(context, persistence);
      const turnId = state.activeTurnId;
      if (turnId === null) return moveTo(AgentStepType.AwaitUserMessage);
      const { throughSequence } = compactContextInputFromWire(rawInput);
      const previous = context.read(persistence.contextSummary) ?? null;
      const summarizedThrough = previous?.lastSequence ?? 0;
      if (options.compaction === null || runner.summarizeContext === undefined || throughSequence <= summarizedThrough) {
        // Nothing left to summarize (a Worker without the policy, or a summary already past it): call the model.
        context.write(persistence.agentState, { ...state, status: "running_model" });
        return moveToModelInputStep(context, environment, AgentStepType.RunModel);
      }
      requireModelInputLoaded(context, environment);
      const events = createEventWriter(context, persistence, turnId);
      await events.write("compaction_started", { through_sequence: throughSequence });
      // Stored before the summary call starts (a heartbeat drains the Worker's batched Stream writes), so a
      // crash during the call leaves its start in the Stream.
      await context.heartbeat();
      const request: ContextSummaryRequest = {
        flowId: context.flowId,
        turnId,
        attempt: context.attempt,
        previousSummary: previous,
        messages: loadedMessages(context, environment).filter((message) => message.sequence > summarizedThrough && message.sequence <= throughSequence),
        throughSequence,
        inputTokenBudget: options.compaction.contextWindowTokens,
        sessionSettings: turnSessionSettingsOf(context, persistence, turnId),
        interactionMode: state.interactionMode ?? "chat",
        events,
        cancellationSignal: context.cancellationSignal,
        deadline: context.deadline,
        stepExecutionId: context.executionId,
        heartbeat: () => context.heartbeat(),
      };
      const summarize = runner.summarizeContext.bind(runner);
      const result = await traceModelCall(context, environment, { turnId, messages: request.messages }, () => withBackgroundHeartbeat(context, () => summarize(request)),
        (answer) => ({ modelCallMetadata: answer?.modelCallMetadata, usage: answer?.usage, outputText: answer?.summary }));
      // cancel_turn cancelled this execution: its commit would be dropped.
      if (context.cancellationSignal.aborted) throw new Error(`the compaction of ${turnId} was cancelled; its summary is dropped`);
      checkSummary(result);
      const summary: ContextSummary = {
        summary: result.summary,
        lastSequence: throughSequence,
        generation: (previous?.generation ?? 0) + 1,
        turnId,
        createdAt: isoNow(context),
      };
      context.write(persistence.contextSummary, summary);
      applyRetention(context, environment);
      await recordUsage(context, environment, result.usage ?? emptyAgentUsage(), events);
      context.write(persistence.agentState, { ...state, status: "running_model" });
      await events.write("compaction_finished", { generation: summary.generation, through_sequence: throughSequence });
      return moveToModelInputStep(context, environment, AgentStepType.RunModel);
    },
  });
}
