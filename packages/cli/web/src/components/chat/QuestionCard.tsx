// Slot for questions the agent asks a person (interrupts of kind "question").
//
// The session contract has `answer_question`, but the dev server has no
// route for it yet and the example agent asks no questions. Until then this
// card shows a pending question read-only, so a session that asks one does
// not look stuck. When the route lands: add choice buttons and a free-text
// answer here that POST to it, and render the card inline in the turn (the
// UI stream maps questions to tool parts with state "approval-requested").
import type { WireInterrupt } from "../../lib/api.ts";

export function QuestionCard(props: { interrupt: WireInterrupt }) {
  const { interrupt } = props;
  return (
    <div className="question-card" data-testid="question-card">
      <div className="question-head">
        <span aria-hidden="true">?</span> The agent asks
      </div>
      <p className="question-text">{interrupt.question ?? `A question from ${interrupt.tool_name}`}</p>
      {interrupt.choices !== undefined && interrupt.choices.length > 0 && (
        <ul className="question-choices">
          {interrupt.choices.map((choice) => <li key={choice}>{choice}</li>)}
        </ul>
      )}
      <p className="muted small">Answering questions from the web UI is not available yet.</p>
    </div>
  );
}
