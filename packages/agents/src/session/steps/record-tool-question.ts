/**
 * A tool Step whose tool returned `ToolInputRequested`: it holds no
 * `PendingInterrupts` lock, so it only records `awaiting_answer` and the
 * question; `AwaitQuestionAnswer` raises it as `<toolCallId>-input-<n>`.
 */
import { deadEnd, moveTo, type ExecuteContext, type StepDecision } from "@perdure/engine";
import type { AgentEventWriter } from "../../contract/values/agent-event.ts";
import { toolInputInterruptId } from "../../contract/values/agent-interrupt.ts";
import type { AgentToolCall, AgentToolCallRecord } from "../../contract/values/agent-tool-call.ts";
import { failedToolResult, isBlankText, outcomeUnknownToolResult } from "../../contract/values/result-texts.ts";
import { withoutFields } from "../../contract/values/wire.ts";
import { questionLoad } from "../built-in-tools/question-load.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { finishToolCall } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";

interface CheckedQuestion {
  question: string;
  choices: string[] | null;
  allowsFreeText: boolean;
  continuation: string | null;
}

function checkQuestion(requested: unknown): CheckedQuestion | string {
  const { question, choices = null, allowsFreeText = null, continuation = null } = requested as Record<string, unknown>;
  if (typeof question !== "string" || isBlankText(question)) return `question must be a non-blank string, got ${JSON.stringify(question)}`;
  if (choices !== null && (!Array.isArray(choices) || choices.length === 0 || choices.some((choice) => typeof choice !== "string" || isBlankText(choice)))) {
    return `choices must be null or a non-empty list of non-blank strings, got ${JSON.stringify(choices)}`;
  }
  if (allowsFreeText !== null && typeof allowsFreeText !== "boolean") return `allowsFreeText must be a boolean or null, got ${JSON.stringify(allowsFreeText)}`;
  if (continuation !== null && typeof continuation !== "string") return `continuation must be a string or null, got ${JSON.stringify(continuation)}`;
  const resolvedFreeText = allowsFreeText ?? choices === null;
  if (choices === null && !resolvedFreeText) return "allowsFreeText is false, so choices must be given";
  return { question, choices: choices as string[] | null, allowsFreeText: resolvedFreeText, continuation };
}

/** Records the tool's question and moves to `AwaitQuestionAnswer`; an invalid question fails the call, which took no effect. */
export async function recordToolQuestion(
  context: ExecuteContext,
  environment: SessionEnvironment,
  toolCall: AgentToolCall,
  requested: unknown,
  events: AgentEventWriter,
): Promise<StepDecision> {
  const { persistence } = environment;
  const checked = checkQuestion(requested);
  if (typeof checked === "string") {
    const error = `the tool's question is invalid: ${checked}`;
    // A task's question comes after its work started, so a write's outcome is unknown.
    if (toolCall.taskId !== undefined && toolCall.effect !== "read") {
      await finishToolCall(context, persistence, toolCall, "outcome_unknown", { output: outcomeUnknownToolResult, error }, events);
      return deadEnd();
    }
    await finishToolCall(context, persistence, toolCall, "failed", { output: failedToolResult(error), error }, events);
    return deadEnd();
  }
  const rest = withoutFields(toolCall, ["inputContinuation"]);
  const record: AgentToolCallRecord = {
    ...rest,
    status: "awaiting_answer",
    inputQuestion: checked.question,
    ...(checked.choices === null ? {} : { inputChoices: checked.choices }),
    inputAllowsFreeText: checked.allowsFreeText,
    ...(checked.continuation === null ? {} : { inputContinuation: checked.continuation }),
  };
  context.write(persistence.agentToolCalls.instance(toolCall.toolCallId), record);
  const interruptId = toolInputInterruptId(toolCall.toolCallId, (toolCall.inputAnswers?.length ?? 0) + 1);
  return moveTo(AgentStepType.AwaitQuestionAnswer, toolCall.toolCallId, { load: questionLoad(environment, interruptId) });
}
