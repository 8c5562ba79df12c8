// How the chat answers a question. Normally the answer is set on the
// question's part and the assistant message sent back, as an approval is.
// While a stream runs (another call of the turn is still working), it goes
// to the session's own route instead, and the running stream brings the
// question's resolution.
import type { QuestionResponse } from "../../lib/agent-parts.ts";
import { api } from "../../lib/api.ts";

/** Answers sent outside the chat's own request, or why they failed, by interrupt ID. */
export type LocalAnswers = ReadonlyMap<string, { response: QuestionResponse } | { error: string }>;

export interface QuestionAnswersOptions {
  sessionId: string;
  /** A stream runs: answer through the session's question route. */
  requestActive: boolean;
  onActivity: () => void;
  setAnswers: (update: (answers: LocalAnswers) => LocalAnswers) => void;
  /** Sets the response on the question's part and sends the message. */
  sendWithResponse: (interruptId: string, response: QuestionResponse) => void;
}

/** The chat's answer handler for question cards, made on each render. */
export function questionAnswerHandler(options: QuestionAnswersOptions): (interruptId: string, response: QuestionResponse) => void {
  const { sessionId, requestActive, onActivity, setAnswers, sendWithResponse } = options;
  return (interruptId, response) => {
    if (requestActive) {
      setAnswers((answers) => new Map(answers).set(interruptId, { response }));
      api.answerQuestion(sessionId, interruptId, response).then(
        (result) => {
          if (!result.answered) setAnswers((answers) => new Map(answers).set(interruptId, { error: `the session did not accept it: ${result.reason}` }));
          onActivity();
        },
        (failure: unknown) => setAnswers((answers) => new Map(answers).set(interruptId, { error: failure instanceof Error ? failure.message : String(failure) })),
      );
      return;
    }
    setAnswers((answers) => {
      if (!answers.has(interruptId)) return answers;
      const next = new Map(answers);
      next.delete(interruptId);
      return next;
    });
    sendWithResponse(interruptId, response);
  };
}
