// The conversation: user bubbles on the right, the agent's turns on the left
// with their text, reasoning, tool calls, questions, durable waits and plan
// updates in the order they happened.
import { isToolUIPart, type DynamicToolUIPart, type UIMessage } from "ai";
import { useState } from "react";
import { askUserAnswerOf, latestMcpToolProgress, planPartOf, questionOf, questionResolutionOf, timerOf, toolTaskOf, turnControlOf, type QuestionData, type QuestionResolutionData, type QuestionResponse, type TurnControlData } from "../../lib/agent-parts.ts";
import type { WireToolCall } from "../../lib/api.ts";
import { DurableWaitCard } from "./DurableWaitCard.tsx";
import { PlanUpdateNote } from "./PlanView.tsx";
import { QuestionCard } from "./QuestionCard.tsx";
import { RichText } from "./RichText.tsx";
import { ToolCallCard } from "./ToolCallCard.tsx";

type Part = UIMessage["parts"][number];

/** Tool parts as one shape: the UI stream sends dynamic tool parts, but a static one reads the same. */
export function asDynamicToolPart(part: Part): DynamicToolUIPart | null {
  if (!isToolUIPart(part)) return null;
  if (part.type === "dynamic-tool") return part;
  return { ...part, type: "dynamic-tool", toolName: part.type.slice("tool-".length) } as DynamicToolUIPart;
}

/** `turn-3-assistant` → `turn-3`. */
export function turnIdOfMessage(messageId: string): string | null {
  return messageId.endsWith("-assistant") ? messageId.slice(0, -"-assistant".length) : null;
}

function Reasoning(props: { text: string; streaming: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <div className="reasoning">
      <button type="button" className="reasoning-toggle" onClick={() => setOpen(!open)} aria-expanded={open}>
        {props.streaming ? "Thinking…" : "Reasoning"} <span aria-hidden="true">{open ? "▾" : "▸"}</span>
      </button>
      {open && <div className="reasoning-text">{props.text}</div>}
    </div>
  );
}

export interface MessageListProps {
  messages: UIMessage[];
  /** The message receiving stream parts right now, if any. */
  streamingMessageId: string | null;
  toolRecords: ReadonlyMap<string, WireToolCall>;
  onApprovalResponse: (approvalId: string, approved: boolean, reason?: string) => void;
  onQuestionResponse: (interruptId: string, response: QuestionResponse) => void;
  /** Approvals cannot be answered now (a request is in flight, or the session ended). */
  approvalsDisabled: boolean;
  /** Questions cannot be answered now (the session ended). */
  questionsDisabled: boolean;
  /** Answers this tab sent outside the chat's own request (while a stream ran), or why they failed, by interrupt ID. */
  localAnswers: ReadonlyMap<string, { response: QuestionResponse } | { error: string }>;
  /** Turns this tab saw steered or stopped, by turn ID (their stored messages do not say so). */
  turnOutcomes: ReadonlyMap<string, TurnControlData>;
  /** Forks the session after `throughTurn` turns and sends `text` there: "edit" on a user message, "retry" on an answer. */
  onFork: (throughTurn: number, text: string) => Promise<void>;
  /** Edit and retry wait while a request of this chat runs. */
  forkDisabled: boolean;
}

/** The number of `turn-<n>`, or null. */
function turnNumberOf(turnId: string | null): number | null {
  const match = turnId === null ? null : /^turn-(\d+)$/.exec(turnId);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/**
 * The turn each user message started (the turn of the answer that follows
 * it) and the user text each turn started with, for edit and retry.
 */
function turnStarts(messages: readonly UIMessage[]): { turnOfUserMessage: Map<string, number>; textOfTurn: Map<number, string> } {
  const turnOfUserMessage = new Map<string, number>();
  const textOfTurn = new Map<number, string>();
  messages.forEach((message, index) => {
    if (message.role !== "user") return;
    const next = messages[index + 1];
    const turn = next?.role === "assistant" ? turnNumberOf(turnIdOfMessage(next.id)) : null;
    if (turn === null) return;
    turnOfUserMessage.set(message.id, turn);
    textOfTurn.set(turn, message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(""));
  });
  return { turnOfUserMessage, textOfTurn };
}

/** A user message with "edit": the edited text goes to a new branch that forks before its turn. */
function UserMessage(props: { text: string; turn: number | undefined; onFork: MessageListProps["onFork"]; forkDisabled: boolean }) {
  const [draft, setDraft] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const { turn } = props;
  if (draft === null || turn === undefined) {
    return (
      <div className="message message-user" data-testid="user-message">
        {turn !== undefined && (
          <button type="button" className="button button-ghost small message-action" data-testid="edit-message" disabled={props.forkDisabled} onClick={() => setDraft(props.text)} title="Edit this message and send it in a new branch; this session stays as it is">
            Edit
          </button>
        )}
        <div className="bubble">{props.text}</div>
      </div>
    );
  }
  const send = async (): Promise<void> => {
    setSending(true);
    try {
      await props.onFork(turn - 1, draft);
    } finally {
      setSending(false);
      setDraft(null);
    }
  };
  return (
    <div className="message message-user" data-testid="user-message-editor">
      <div className="bubble bubble-editing">
        <textarea aria-label="Edited message" data-testid="edit-message-text" value={draft} onChange={(event) => setDraft(event.target.value)} rows={3} />
        <div className="edit-actions">
          <button type="button" className="button button-ghost small" onClick={() => setDraft(null)} disabled={sending}>Cancel</button>
          <button type="button" className="button button-primary small" data-testid="send-edited-message" disabled={sending || draft.trim() === ""} onClick={() => void send()}>
            {sending ? "Forking…" : "Send in a new branch"}
          </button>
        </div>
      </div>
    </div>
  );
}

/** What the end of a steered or stopped turn says. */
function TurnControlNotice(props: { outcome: TurnControlData }) {
  const { outcome } = props;
  const text = outcome.outcome === "cancelled"
    ? "Stopped: you stopped this turn; the agent kept what it had done so far."
    : `Steered: ${outcome.steeredMessageCount === 1 ? "your message" : `your ${outcome.steeredMessageCount} messages`} took over in the next turn.`;
  return <div className={`turn-notice turn-${outcome.outcome}`} data-testid="turn-control-notice" data-outcome={outcome.outcome}>{text}</div>;
}

/** The user text `turnId` started with, when the conversation shows it and the person wrote it. */
function retryTextOf(turnId: string, textOfTurn: ReadonlyMap<number, string>): string | undefined {
  const number = turnNumberOf(turnId);
  const text = number === null ? undefined : textOfTurn.get(number);
  return text === undefined || text.startsWith(sessionNotePrefix) ? undefined : text;
}

/** The session's own prefix on messages it writes as the user's, such as a plan approval. */
const sessionNotePrefix = "[Perdure] ";

/** A user message the session wrote, as a short note; undefined for the person's own messages. */
function sessionNoteOf(text: string): string | undefined {
  if (!text.startsWith(sessionNotePrefix)) return undefined;
  const approval = /^\[Perdure\] The user approved plan revision (\d+)\./.exec(text);
  if (approval?.[1] !== undefined) return `You approved plan revision ${approval[1]}; the agent carries it out.`;
  return text.slice(sessionNotePrefix.length);
}

/** Whether a part shows in the conversation. */
function isVisiblePart(part: Part): boolean {
  return part.type === "text" || part.type === "reasoning" || isToolUIPart(part) || questionOf(part) !== undefined || timerOf(part) !== undefined || planPartOf(part) !== undefined;
}

/** An `ask_user` call whose question part is gone (a stored turn) as a closed question card. */
function storedAskUser(tool: DynamicToolUIPart): { question: QuestionData; resolution: QuestionResolutionData; answer: string | undefined } | undefined {
  if (tool.toolName !== "ask_user" || !(tool.state === "output-available" || tool.state === "output-error" || tool.state === "output-denied")) return undefined;
  const input = typeof tool.input === "object" && tool.input !== null ? (tool.input as { question?: unknown; choices?: unknown; allows_free_text?: unknown }) : {};
  if (typeof input.question !== "string") return undefined;
  const output = tool.state === "output-available" ? tool.output : tool.state === "output-error" ? tool.errorText : undefined;
  const answer = askUserAnswerOf(output);
  const text = typeof output === "string" ? output : null;
  const resolution: QuestionResolutionData["resolution"] = answer !== undefined ? "answered" : text === "question deadline passed" ? "deadline_passed" : "declined";
  return {
    question: {
      interruptId: tool.toolCallId, toolCallId: tool.toolCallId, toolName: "ask_user", question: input.question,
      choices: Array.isArray(input.choices) ? input.choices.filter((choice): choice is string => typeof choice === "string") : [],
      allowsFreeText: input.allows_free_text !== false, deadline: null,
    },
    // The session's own text for a decline without a message says no more than "Declined".
    resolution: { interruptId: tool.toolCallId, toolCallId: tool.toolCallId, resolution, rejectionMessage: resolution === "declined" && text !== "The user declined to answer." ? text : null, cancellationReason: null },
    answer,
  };
}

/** The answer a tool's own question got, as its record keeps it. */
function recordedToolAnswer(record: WireToolCall | undefined, interruptId: string): string | undefined {
  return record?.input_answers?.find((entry) => entry.interrupt_id === interruptId)?.answer ?? undefined;
}

export function MessageList(props: MessageListProps) {
  const { turnOfUserMessage, textOfTurn } = turnStarts(props.messages);
  return (
    <>
      {props.messages.map((message) => {
        if (message.role === "user") {
          const text = message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
          const note = sessionNoteOf(text);
          if (note !== undefined) {
            return <div key={message.id} className="turn-notice session-note" data-testid="session-note">{note}</div>;
          }
          return <UserMessage key={message.id} text={text} turn={turnOfUserMessage.get(message.id)} onFork={props.onFork} forkDisabled={props.forkDisabled} />;
        }
        if (message.role !== "assistant") return null;
        const streaming = message.id === props.streamingMessageId;
        const turnId = turnIdOfMessage(message.id);
        const visible = message.parts.filter(isVisiblePart);
        const resolutions = new Map(message.parts.flatMap((part) => {
          const resolution = questionResolutionOf(part);
          return resolution === undefined ? [] : [[resolution.interruptId, resolution] as const];
        }));
        const tools = new Map(message.parts.flatMap((part) => {
          const tool = asDynamicToolPart(part);
          return tool === null ? [] : [[tool.toolCallId, tool] as const];
        }));
        const asked = new Set(message.parts.flatMap((part) => questionOf(part)?.toolCallId ?? []));
        const waited = new Set(message.parts.flatMap((part) => timerOf(part)?.toolCallId ?? []));
        const tasks = new Map(message.parts.flatMap((part) => {
          const task = toolTaskOf(part);
          return task === undefined ? [] : [[task.toolCallId, task] as const];
        }));
        const progress = latestMcpToolProgress(message.parts);
        const outcome = message.parts.map(turnControlOf).findLast((candidate) => candidate !== undefined) ?? (turnId === null ? undefined : props.turnOutcomes.get(turnId));
        const lastTextIndex = visible.findLastIndex((part) => part.type === "text");
        return (
          <div key={message.id} className="message message-assistant" data-testid="assistant-message" data-message-id={message.id}>
            <div className="avatar" aria-hidden="true">P</div>
            <div className="assistant-body">
              {turnId !== null && (
                <div className="turn-label">
                  {turnId.replace("-", " ")}
                  {!streaming && retryTextOf(turnId, textOfTurn) !== undefined && (
                    <button
                      type="button"
                      className="button button-ghost small message-action"
                      data-testid="retry-turn"
                      disabled={props.forkDisabled}
                      title="Send this turn's message again in a new branch; this session stays as it is"
                      onClick={() => void props.onFork((turnNumberOf(turnId) ?? 1) - 1, retryTextOf(turnId, textOfTurn) ?? "")}
                    >
                      Retry
                    </button>
                  )}
                </div>
              )}
              {visible.length === 0 && streaming && <TypingDots />}
              {visible.map((part, index) => {
                if (part.type === "text") {
                  if (part.text === "") return null;
                  return <RichText key={index} text={part.text} streaming={streaming && index === lastTextIndex && index === visible.length - 1} />;
                }
                if (part.type === "reasoning") return <Reasoning key={index} text={part.text} streaming={streaming && index === visible.length - 1} />;
                const streamed = questionOf(part);
                const local = streamed === undefined ? undefined : props.localAnswers.get(streamed.interruptId);
                const question = streamed === undefined || local === undefined ? streamed : { ...streamed, ...local };
                if (question !== undefined) {
                  const asker = tools.get(question.toolCallId);
                  const recordedAnswer = asker?.toolName === "ask_user" && asker.state === "output-available"
                    ? askUserAnswerOf(asker.output)
                    : recordedToolAnswer(props.toolRecords.get(question.toolCallId), question.interruptId);
                  return (
                    <QuestionCard
                      key={`question-${question.interruptId}`}
                      question={question}
                      resolution={resolutions.get(question.interruptId)}
                      recordedAnswer={recordedAnswer}
                      onRespond={props.onQuestionResponse}
                      disabled={props.questionsDisabled}
                    />
                  );
                }
                const timer = timerOf(part);
                if (timer !== undefined) {
                  const state = tools.get(timer.toolCallId)?.state;
                  const finished = state === "output-available" || state === "output-error" || state === "output-denied";
                  return <DurableWaitCard key={`timer-${timer.toolCallId}`} timer={timer} finished={finished} />;
                }
                const plan = planPartOf(part);
                if (plan !== undefined) return <PlanUpdateNote key={`plan-${index}`} plan={plan} />;
                const tool = asDynamicToolPart(part);
                if (tool === null) return null;
                // An ask_user call shows as its question; a durable wait as its timer.
                if (tool.toolName === "ask_user" && asked.has(tool.toolCallId)) return null;
                if (tool.toolName === "durable_wait" && waited.has(tool.toolCallId)) return null;
                const stored = storedAskUser(tool);
                if (stored !== undefined) {
                  return <QuestionCard key={tool.toolCallId} question={stored.question} resolution={stored.resolution} recordedAnswer={stored.answer} onRespond={props.onQuestionResponse} disabled />;
                }
                return (
                  <ToolCallCard
                    key={tool.toolCallId}
                    part={tool}
                    record={props.toolRecords.get(tool.toolCallId)}
                    task={tasks.get(tool.toolCallId)}
                    progress={progress.get(tool.toolCallId)}
                    onApprovalResponse={props.onApprovalResponse}
                    disabled={props.approvalsDisabled}
                  />
                );
              })}
              {outcome !== undefined && <TurnControlNotice outcome={outcome} />}
            </div>
          </div>
        );
      })}
    </>
  );
}

export function TypingDots() {
  return (
    <div className="typing" role="img" aria-label="The agent is working">
      <span />
      <span />
      <span />
    </div>
  );
}
