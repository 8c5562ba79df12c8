/** `answer_question`: answers a pending question, from `ask_user` or from a tool. */
import { describeValue, rpc } from "@perdure/engine";
import { isBlankText } from "../../contract/values/result-texts.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { isoNow, isPastInterruptDeadline } from "../session-operations.ts";
import { requireRunningSession } from "./require-running-session.ts";
import { inputField, inputObject } from "./rpc-input.ts";

/** Input of `answer_question`. */
export interface AnswerQuestionInput {
  interruptId: string;
  answer: string;
}

function parseAnswerQuestion(raw: unknown): AnswerQuestionInput {
  const object = inputObject(raw, "answer_question");
  const interruptId = inputField(object, "interruptId", "interrupt_id");
  const { answer } = object;
  if (typeof interruptId !== "string" || interruptId === "") throw new TypeError(`interruptId must be a non-empty string, got ${describeValue(interruptId)}`);
  if (typeof answer !== "string") throw new TypeError(`answer must be a string, got ${describeValue(answer)}`);
  return { interruptId, answer };
}

/**
 * `false` when the interrupt is not pending (already answered, declined, or
 * of an ended turn), not a question, past its deadline, or the answer is
 * blank or outside `choices` while free text is not allowed. Locks
 * `PendingInterrupts` like `resolve_interrupt`, so it may throw
 * `RpcLockConflictError`, which is safe to retry (`invokeRPC`'s
 * `lockConflictRetryMs`).
 */
export function createAnswerQuestionRpc(environment: SessionEnvironment) {
  const { persistence } = environment;
  return rpc<AnswerQuestionInput, boolean>({
    name: "answer_question",
    parseInput: parseAnswerQuestion,
    locks: [persistence.pendingInterrupts],
    handler: async (context, input) => {
      requireRunningSession(context, "answer_question");
      const pending = (await context.read(persistence.pendingInterrupts)) ?? [];
      const interrupt = pending.find((candidate) => candidate.interruptId === input.interruptId);
      if (interrupt?.kind !== "question") return false;
      if (isPastInterruptDeadline(context, interrupt.deadline)) return false;
      if (isBlankText(input.answer)) return false;
      const allowsFreeText = interrupt.allowsFreeText ?? interrupt.choices === undefined;
      if (!allowsFreeText && !(interrupt.choices ?? []).includes(input.answer)) return false;
      await context.write(persistence.pendingInterrupts, pending.filter((candidate) => candidate.interruptId !== input.interruptId));
      await context.publish(persistence.interruptResolutions.instance(input.interruptId), {
        interruptId: input.interruptId, approved: true, rejectionMessage: null, resolvedAt: isoNow(context), answer: input.answer,
      });
      return true;
    },
  });
}
