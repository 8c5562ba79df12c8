import { defineFlow, InvalidInputError } from "@perdure/engine";
import type { AgentSessionFeatures } from "../contract/ui-stream/session-inspection.ts";
import type { AgentFrameworkRunner, DeferredToolOutcome } from "../contract/agent-framework-runner.ts";
import { createAgentSessionPersistence } from "./persistence.ts";
import { createSessionRpcs } from "./rpcs/session-rpcs.ts";
import { resolveAgentSessionOptions, type AgentSessionOptions } from "./session-options.ts";
import type { SessionEnvironment } from "./session-environment.ts";
import { createRunModelStep } from "./steps/run-model.ts";
import { checkCompactionRunner, createCompactContextStep } from "./steps/compact-context.ts";
import { createAwaitQuestionAnswerStep } from "./steps/await-question-answer.ts";
import { createAwaitTimerStep } from "./steps/await-timer.ts";
import { createAwaitUserMessageStep } from "./steps/await-user-message.ts";
import { createStartAgentSessionStep } from "./steps/start-agent-session.ts";
import {
  createAwaitToolApprovalStep,
  createCallSingleAttemptToolStep,
  createCallToolStep,
  createRecordToolFailureStep,
  createRecordToolOutcomeUnknownStep,
} from "./steps/tool-steps.ts";
import { createRecordTurnFailureStep, createResumeTurnStep } from "./steps/turn-steps.ts";
import { createApplyTurnControlStep } from "./steps/apply-turn-control.ts";
import { createCancelToolTaskStep } from "./steps/cancel-tool-task.ts";
import { createFinishTurnCancellationStep } from "./steps/finish-turn-cancellation.ts";
import { createPollToolTaskStep } from "./steps/poll-tool-task.ts";
import { AgentStepType } from "./step-types.ts";
import { createAwaitScheduledTurnStep } from "./schedules/await-scheduled-turn.ts";
import { createScheduleTurnCallStep } from "./schedules/schedule-turn-call.ts";
import { createNotifyParentSessionStep } from "./sub-agents/notify-parent-session.ts";
import { AgentSessionTracer } from "../tracing/agent-session-tracer.ts";
import { resolveAgentTracingOptions } from "../tracing/agent-tracing-options.ts";
import { checkAgentSessionStartInput } from "../contract/values/agent-state.ts";

function checkRunner(runner: AgentFrameworkRunner<unknown>): void {
  for (const method of ["buildUserMessage", "runModelStep", "executeDeferredToolCall"] as const) {
    if (typeof runner?.[method] !== "function") {
      throw new InvalidInputError(`the agent runner has no ${method} method; implement AgentFrameworkRunner`);
    }
  }
}

/**
 * Builds the durable agent session Flow around a runner. Each model call and
 * each tool call is its own Step; the Flow's persistence definitions and RPCs
 * are properties of the result (`flow.agentState`, `flow.sendUserMessage`).
 *
 * @example
 * const flow = createAgentSessionFlow(new MyRunner(), "SupportAgent", { interruptDeadlineMs: 3_600_000 });
 * await client.start(flow, "session-1", { initial_message: "Where is order 7?" });
 * await client.invokeRPC(flow.sendUserMessage, "session-1", { text: "And order 8?" });
 */
export function createAgentSessionFlow(runner: AgentFrameworkRunner<DeferredToolOutcome>, flowType: string, options: AgentSessionOptions = {}) {
  checkRunner(runner);
  const resolved = resolveAgentSessionOptions(options);
  if (resolved.compaction !== null) checkCompactionRunner(runner);
  if (resolved.planModeEnabled && runner.supportsPlanMode !== true) {
    throw new InvalidInputError("planModeEnabled needs a runner whose supportsPlanMode is true, such as the Stepwise runner: it must offer only write_todos in a planning turn");
  }
  const persistence = createAgentSessionPersistence(resolved);
  const tracer = new AgentSessionTracer(resolveAgentTracingOptions(options.tracing, flowType));
  const environment: SessionEnvironment = { runner, persistence, options: resolved, tracer };
  const flow = defineFlow({
    type: flowType,
    start: AgentStepType.StartAgentSession,
    steps: [
      createStartAgentSessionStep(environment),
      createAwaitUserMessageStep(environment),
      createRunModelStep(environment),
      createCompactContextStep(environment),
      createAwaitToolApprovalStep(environment),
      createAwaitQuestionAnswerStep(environment),
      createAwaitTimerStep(environment),
      createCallToolStep(environment),
      createCallSingleAttemptToolStep(environment),
      createRecordToolFailureStep(environment),
      createRecordToolOutcomeUnknownStep(environment),
      createResumeTurnStep(environment),
      createRecordTurnFailureStep(environment),
      createPollToolTaskStep(environment),
      createApplyTurnControlStep(environment),
      createFinishTurnCancellationStep(environment),
      createCancelToolTaskStep(environment),
      createAwaitScheduledTurnStep(environment),
      createScheduleTurnCallStep(environment),
      createNotifyParentSessionStep(environment),
    ],
    persistence,
    rpcs: createSessionRpcs(environment),
    parseInput: (input) => {
      const checked = checkAgentSessionStartInput(input);
      const text = (checked.initial_message ?? checked.initialMessage) as string | null | undefined;
      if (typeof text === "string" && Buffer.byteLength(text) > resolved.maxUserMessageBytes) {
        throw new TypeError(`initial_message of ${Buffer.byteLength(text)} bytes is over the session's maxUserMessageBytes of ${resolved.maxUserMessageBytes}`);
      }
      return checked;
    },
  });
  runnersByFlow.set(flow, runner);
  optionsByFlow.set(flow, options);
  featuresByFlow.set(flow, { planModeEnabled: resolved.planModeEnabled, builtInTools: resolved.builtInTools, modelChoices: [...(runner.modelChoices ?? [])] });
  return flow;
}

/** The runner of each session Flow, for what the Flow definition itself does not carry. */
const runnersByFlow = new WeakMap<object, AgentFrameworkRunner<DeferredToolOutcome>>();

/** The options each session Flow was built with, so a replay can build the same Flow around another runner. */
const optionsByFlow = new WeakMap<object, AgentSessionOptions>();

/**
 * The runner and options a session Flow was built with, or undefined for
 * any other object. For `replaySession`, which builds the same Flow around a
 * runner that answers from a recording; not a public export.
 */
export function agentSessionFlowParts(flow: unknown): { runner: AgentFrameworkRunner<DeferredToolOutcome>; options: AgentSessionOptions } | undefined {
  if (typeof flow !== "object" || flow === null) return undefined;
  const runner = runnersByFlow.get(flow);
  const options = optionsByFlow.get(flow);
  return runner === undefined || options === undefined ? undefined : { runner, options };
}

export type { AgentSessionFeatures } from "../contract/ui-stream/session-inspection.ts";

/** The resolved features of each session Flow, for `describeAgentSessionFeatures`. */
const featuresByFlow = new WeakMap<object, AgentSessionFeatures>();


/** The Flow definition `createAgentSessionFlow` returns. */
export type AgentSessionFlow = ReturnType<typeof createAgentSessionFlow>;

/**
 * Which model a session Flow's runner calls, as the runner describes it
 * (`StepwiseAgentRunner` passes on its `ModelClient`'s `description`), or
 * undefined when it does not say.
 *
 * @example
 * console.log(`${flow.flowType} uses ${describeAgentSessionModel(flow) ?? "an undescribed model"}`);
 */
export function describeAgentSessionModel(flow: AgentSessionFlow): string | undefined {
  const description = runnersByFlow.get(flow)?.modelDescription;
  return typeof description === "string" && description !== "" ? description : undefined;
}

/**
 * What a session Flow accepts, from the options it was built with: whether
 * plan mode is on and which built-in tools are enabled. A UI uses it to show
 * a "plan first" toggle only where `planMode` messages are accepted.
 *
 * @example
 * const { planModeEnabled } = describeAgentSessionFeatures(flow);
 */
export function describeAgentSessionFeatures(flow: AgentSessionFlow): AgentSessionFeatures {
  const features = featuresByFlow.get(flow);
  if (features === undefined) throw new InvalidInputError(`${String((flow as { flowType?: unknown })?.flowType)} is not a Flow that createAgentSessionFlow built`);
  return { planModeEnabled: features.planModeEnabled, builtInTools: [...features.builtInTools], modelChoices: [...features.modelChoices] };
}
