// A question the agent asks a person (`ask_user`, or a tool that needs an
// answer before it acts), inline in the turn after the call it belongs to.
// Pick a choice or type an answer, or decline with an optional message for
// the agent. The answer travels back in the assistant message, through the
// same route as approvals; the session waits, durably, until then.
import { useLayoutEffect, useRef, useState } from "react";
import { announce, moveFocusAfterAction } from "../../lib/a11y.tsx";
import type { QuestionData, QuestionResolutionData, QuestionResponse } from "../../lib/agent-parts.ts";
import { formatDuration } from "../../lib/format.ts";
import { QuestionIcon } from "../Icons.tsx";
import { Badge, type Tone } from "../StatusBadge.tsx";

export interface QuestionCardProps {
  question: QuestionData;
  /** How it ended, once the stream said so. */
  resolution: QuestionResolutionData | undefined;
  /** The answer as the session recorded it (an `ask_user` call's result), when this tab did not send it. */
  recordedAnswer: string | undefined;
  onRespond: (interruptId: string, response: QuestionResponse) => void;
  /** A request is in flight or the session takes no input. */
  disabled: boolean;
}

type CardState = "open" | "sending" | QuestionResolutionData["resolution"];

function describe(state: CardState): { label: string; tone: Tone; pulse: boolean } {
  switch (state) {
    case "open":
      return { label: "needs an answer", tone: "indigo", pulse: true };
    case "sending":
      return { label: "answer sent", tone: "blue", pulse: true };
    case "answered":
      return { label: "answered", tone: "green", pulse: false };
    case "declined":
      return { label: "declined", tone: "grey", pulse: false };
    case "deadline_passed":
      return { label: "expired", tone: "grey", pulse: false };
    case "cancelled":
      return { label: "withdrawn", tone: "grey", pulse: false };
    case "no_longer_pending":
      return { label: "closed", tone: "grey", pulse: false };
  }
}

function QuestionMark() {
  return <span className="question-mark"><QuestionIcon /></span>;
}

function Deadline(props: { deadline: string }) {
  const due = Date.parse(props.deadline);
  if (Number.isNaN(due)) return null;
  const left = due - Date.now();
  const time = new Date(due).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  return <span className="muted small">{left > 0 ? `answer by ${time} (in ${formatDuration(left)})` : `was due at ${time}`}</span>;
}

function Outcome(props: { state: CardState; resolution: QuestionResolutionData | undefined; answer: string | undefined }) {
  const { state, resolution, answer } = props;
  if (state === "sending") {
    return (
      <p className="question-outcome">
        <span className="spinner spinner-dark" aria-hidden="true" /> {answer === undefined ? "Declining…" : <>Sending <strong>{answer}</strong>…</>}
      </p>
    );
  }
  if (state === "answered") return <p className="question-outcome">{answer === undefined ? "Answered." : <>Answered: <strong data-testid="question-answer">{answer}</strong></>}</p>;
  if (state === "declined") return <p className="question-outcome muted">Declined{resolution?.rejectionMessage !== null && resolution?.rejectionMessage !== undefined ? `: ${resolution.rejectionMessage}` : "."}</p>;
  if (state === "deadline_passed") return <p className="question-outcome muted">No answer came before the deadline; the agent was told so.</p>;
  if (state === "cancelled") {
    const why = resolution?.cancellationReason === "turn_cancelled" ? "the turn was stopped" : "a new message steered the turn";
    return <p className="question-outcome muted">Withdrawn: {why}.</p>;
  }
  if (state === "no_longer_pending") return <p className="question-outcome muted">The agent no longer waits for this answer.</p>;
  return null;
}

export function QuestionCard(props: QuestionCardProps) {
  const { question, resolution } = props;
  const [text, setText] = useState("");
  const [declining, setDeclining] = useState(false);
  const [reason, setReason] = useState("");
  const state: CardState = resolution?.resolution ?? (question.response !== undefined ? "sending" : "open");
  const badge = describe(state);
  const sent = question.response !== undefined && "answer" in question.response ? question.response.answer : undefined;
  const answer = sent ?? props.recordedAnswer;
  const hasChoices = question.choices.length > 0;
  const respond = (response: QuestionResponse): void => {
    props.onRespond(question.interruptId, response);
    announce("answer" in response ? `Answered: ${response.answer}.` : "Declined the question.");
    moveFocusAfterAction();
  };
  /** Back to "Decline…" when the message field closes without a decision. */
  const declineButton = useRef<HTMLButtonElement>(null);
  const [returnFocus, setReturnFocus] = useState(false);
  // Before the next frame is drawn, so the focus is never seen on <body>.
  useLayoutEffect(() => {
    if (returnFocus && !declining) {
      declineButton.current?.focus();
      setReturnFocus(false);
    }
  }, [returnFocus, declining]);
  const closeDecline = (): void => {
    setDeclining(false);
    setReturnFocus(true);
  };
  const fromTool = question.toolName !== "ask_user";

  return (
    <div className={`question-card question-${state}`} role="group" aria-labelledby={`question-${question.interruptId}`} data-testid="question-card" data-interrupt-id={question.interruptId} data-state={state}>
      <div className="question-head">
        <QuestionMark />
        <span className="question-title">{fromTool ? <><span className="mono">{question.toolName}</span> asks</> : "The agent asks"}</span>
        <span className="spacer" />
        {state === "open" && question.deadline !== null && <Deadline deadline={question.deadline} />}
        <Badge tone={badge.tone} pulse={badge.pulse}>{badge.label}</Badge>
      </div>
      <p className="question-text" id={`question-${question.interruptId}`} data-testid="question-text">{question.question}</p>
      {state === "open" ? (
        <>
          {question.error !== undefined && <div className="inline-error" role="alert">Not accepted: {question.error}.</div>}
          {hasChoices && (
            <div className="question-row">
              <div className="question-choices" role="group" aria-label="Choices">
                {question.choices.map((choice, index) => (
                  <button key={choice} type="button" className="button question-choice" data-focus-next={index === 0 ? true : undefined} disabled={props.disabled} onClick={() => respond({ answer: choice })}>
                    {choice}
                  </button>
                ))}
              </div>
              {!question.allowsFreeText && !declining && (
                <button type="button" ref={declineButton} className="button button-ghost" disabled={props.disabled} onClick={() => setDeclining(true)}>Decline…</button>
              )}
            </div>
          )}
          {!declining && (question.allowsFreeText || !hasChoices) && (
            <form
              className="question-form"
              onSubmit={(event) => {
                event.preventDefault();
                if (text.trim() !== "") respond({ answer: text.trim() });
              }}
            >
              {question.allowsFreeText && (
                <>
                  <input
                    className="question-input"
                    data-focus-next={hasChoices ? undefined : true}
                    aria-label="Your answer"
                    placeholder={hasChoices ? "Or type another answer" : "Type your answer"}
                    value={text}
                    onChange={(event) => setText(event.target.value)}
                  />
                  <button type="submit" className="button button-primary" disabled={props.disabled || text.trim() === ""}>Answer</button>
                </>
              )}
              <button type="button" ref={declineButton} className="button button-ghost" disabled={props.disabled} onClick={() => setDeclining(true)}>Decline…</button>
            </form>
          )}
          {declining && (
            <form
              className="question-form"
              onSubmit={(event) => {
                event.preventDefault();
                respond(reason.trim() === "" ? { declined: true } : { declined: true, reason: reason.trim() });
              }}
              onKeyDown={(event) => {
                if (event.key === "Escape") {
                  event.preventDefault();
                  closeDecline();
                }
              }}
            >
              <input className="question-input" autoFocus aria-label="Message for the agent" placeholder="Why not? (optional, the agent sees it)" value={reason} onChange={(event) => setReason(event.target.value)} />
              <button type="submit" className="button button-reject" disabled={props.disabled}>Decline</button>
              <button type="button" className="button button-ghost" onClick={closeDecline}>Cancel</button>
            </form>
          )}
          <p className="muted small question-hint">The session waits, durably, until you answer: close the tab or restart the server, the question stays.</p>
        </>
      ) : (
        <Outcome state={state} resolution={resolution} answer={answer} />
      )}
    </div>
  );
}
