// The live chat of one session over the AI SDK UI message stream of
// @perdure/agents/ui-stream: `useChat` with the session ID as the chat ID,
// the stored messages and resume token it was mounted with, and the latest
// resume token sent back on every reconnect, so a reload or a dropped
// connection resumes the turn without repeating text. A reconnect that finds
// no turn to follow reads the stored messages again: the turn it lost is over.
// Below the messages: the plan, the queue (with "Send now" and "Delete") and
// the composer with the Stop button.
import { useChat } from "@ai-sdk/react";
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { turnControlOf, withQuestionResponse, wirePlanOf, type TurnControlData } from "../../lib/agent-parts.ts";
import { announce } from "../../lib/a11y.tsx";
import { api, type ChatSnapshot } from "../../lib/api.ts";
import { turnNumberOf, turnToStop, withLocalStops } from "../../lib/turn-stops.ts";
import { errorTextOf, isDisconnect } from "./chat-errors.ts";
import type { LiveSession } from "./live-session.ts";
import { Composer } from "./Composer.tsx";
import { MessageList, turnIdOfMessage, TypingDots } from "./MessageList.tsx";
import { PlanView } from "./PlanView.tsx";
import { QueuedMessages } from "./QueuedMessages.tsx";
import { SessionChatTransport } from "./session-chat-transport.ts";
import { TurnControls } from "./TurnControls.tsx";
import { useMessageQueue } from "./use-message-queue.ts";
import { questionAnswerHandler, type LocalAnswers } from "./question-answers.ts";
import { useReconnectBackoff } from "./use-reconnect-backoff.ts";
import { asksPerson, isWaitingForPerson, offersStaleRequest } from "./waiting-on-person.ts";

/** The usual least time between two reads of the stored conversation. */
const resyncIntervalMs = 1500;

/** Options of the chat's resync. */
interface ResyncOptions {
  /** Read now rather than after the interval since the last read. @default false */
  immediate?: boolean;
}

export interface ChatViewProps {
  sessionId: string;
  live: LiveSession;
  /** Something changed: read the session again now. */
  onActivity: () => void;
  /** The stored conversation and resume token the chat starts from. */
  initial: ChatSnapshot;
  /** Forks the session after `throughTurn` turns and sends `text` there (edit and resend, retry). */
  onFork: (throughTurn: number, text: string) => Promise<void>;
}

/** The highest turn number among `messages`' turn IDs (0 for none). */
function turnsShownBy(messages: readonly UIMessage[]): number {
  return Math.max(0, ...messages.map((message) => turnNumberOf(turnIdOfMessage(message.id) ?? "")));
}

/** The live chat, mounted on a loaded conversation. */
export function ChatView(props: ChatViewProps) {
  const { sessionId, live, onActivity } = props;
  const resumeToken = useRef<string | undefined>(props.initial.resumeToken ?? undefined);
  /** Turns whose stream this tab saw end, so a lagging snapshot does not trigger a catch-up. */
  const finishedTurns = useRef(new Set<string>());
  const lastSyncAt = useRef(Date.now());
  const syncing = useRef(false);
  const queue = useMessageQueue(sessionId, useMemo(() => live.queuedMessages.map((message) => message.message_id), [live.queuedMessages]), live.loadedAt, onActivity);
  /** Send the next message in plan mode: its turn drafts a plan to approve before anything runs. */
  const [planMode, setPlanMode] = useState(false);
  /** False once the session refused a plan-mode message (its agent does not enable plan mode), for a server that does not describe its agents. */
  const [planModeRefusedOnce, setPlanModeRefusedOnce] = useState(false);
  const planModeAvailable = live.planModeEnabled !== false && !planModeRefusedOnce;
  /** Turns this tab saw steered or stopped: their stored messages do not say so. */
  const [turnOutcomes, setTurnOutcomes] = useState<ReadonlyMap<string, TurnControlData>>(new Map());
  /** Turns this tab stopped: shown as stopped once they end, even when their streams did not reach the tab. */
  const [stoppedTurns, setStoppedTurns] = useState<ReadonlySet<string>>(new Set());
  const onTurnStopped = useCallback((turnId: string) => setStoppedTurns((turns) => new Set(turns).add(turnId)), []);
  /** Answers sent through the session's question route while a stream ran, or why they failed. */
  const [localAnswers, setLocalAnswers] = useState<LocalAnswers>(new Map());

  const resyncRef = useRef<(reason: string, options?: ResyncOptions) => void>(() => undefined);
  const lastEmptyReconnectAt = useRef(0);
  const transport = useMemo(
    () =>
      new SessionChatTransport({
        resumeToken: () => resumeToken.current,
        // The turn this tab lost (to a restart, a dropped connection) ended meanwhile: show its stored reply now.
        // At once only once per interval, so a snapshot and a stream that disagree cannot spin.
        onNoTurnToFollow: () => {
          const now = Date.now();
          const immediate = now - lastEmptyReconnectAt.current >= resyncIntervalMs;
          lastEmptyReconnectAt.current = now;
          resyncRef.current("a reconnect found no turn to follow", { immediate });
        },
      }),
    [],
  );

  const chat = useChat<UIMessage>({
    id: sessionId,
    messages: props.initial.messages,
    resume: props.initial.resumeToken !== null,
    transport,
    onData: (part) => {
      if (part.type === "data-agent-resume-token" && typeof part.data === "string") resumeToken.current = part.data;
      const outcome = turnControlOf(part);
      if (outcome !== undefined) setTurnOutcomes((outcomes) => new Map(outcomes).set(outcome.turnId, outcome));
    },
    onFinish: ({ message, finishReason, isAbort, isDisconnect: dropped, isError }) => {
      const turnId = turnIdOfMessage(message.id);
      if (turnId !== null && !isAbort && !dropped && (finishReason === "stop" || finishReason === "error" || isError)) finishedTurns.current.add(turnId);
      // "other": the turn ended without its events reaching the stream; the stored messages are the truth.
      if (finishReason === "other") resyncRef.current("the turn ended without live events");
      onActivity();
    },
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const { messages, status, error, setMessages, resumeStream, sendMessage, addToolApprovalResponse, clearError } = chat;
  const statusRef = useRef(status);
  statusRef.current = status;
  const requestActive = status === "submitted" || status === "streaming";
  const disconnected = status === "error" && isDisconnect(error);

  /** Reads the stored conversation again and follows the active turn, if any (at most once every 1.5 s unless immediate). */
  const resyncTimer = useRef<number | undefined>(undefined);
  const resync = useCallback(
    (reason: string, options: ResyncOptions = {}): void => {
      const immediate = options.immediate === true;
      if (syncing.current) return;
      if (resyncTimer.current !== undefined) {
        if (!immediate) return;
        window.clearTimeout(resyncTimer.current);
        resyncTimer.current = undefined;
      }
      const early = immediate ? 0 : resyncIntervalMs - (Date.now() - lastSyncAt.current);
      if (early > 0) {
        resyncTimer.current = window.setTimeout(() => {
          resyncTimer.current = undefined;
          resyncRef.current(reason);
        }, early);
        return;
      }
      syncing.current = true;
      lastSyncAt.current = Date.now();
      api.chat(sessionId).then(
        (snapshot) => {
          syncing.current = false;
          lastSyncAt.current = Date.now();
          if (statusRef.current === "submitted" || statusRef.current === "streaming") return;
          resumeToken.current = snapshot.resumeToken ?? undefined;
          setMessages(snapshot.messages);
          if (snapshot.resumeToken !== null) void resumeStream();
        },
        (failure: unknown) => {
          syncing.current = false;
          console.warn(`perdure dev: could not resync the chat (${reason})`, failure);
        },
      );
    },
    [sessionId, setMessages, resumeStream],
  );
  resyncRef.current = resync;
  useEffect(() => () => window.clearTimeout(resyncTimer.current), []);

  const reconnect = useCallback(() => {
    lastSyncAt.current = Date.now();
    void resumeStream();
  }, [resumeStream]);
  const retryIn = useReconnectBackoff(disconnected, error, reconnect);

  // Follow turns this tab did not start (a queued message, another tab, the
  // terminal chat), poll the stored messages while a turn's live events are
  // lost, and catch up when another tab or the terminal answered an approval.
  const activeTurn = live.activeTurnId !== null && live.flowStatus === "running" && !finishedTurns.current.has(live.activeTurnId) ? live.activeTurnId : null;
  const activeAssistant = activeTurn === null ? undefined : messages.find((message) => message.id === `${activeTurn}-assistant`);
  const pendingIds = useMemo(() => new Set(live.pendingInterrupts.map((interrupt) => interrupt.interrupt_id)), [live.pendingInterrupts]);
  const messagesSeen = useRef({ messages, at: Date.now() });
  if (messagesSeen.current.messages !== messages) messagesSeen.current = { messages, at: Date.now() };
  const inspectedSinceMessages = live.loadedAt > messagesSeen.current.at + 300;
  const waitingForPerson = isWaitingForPerson(activeAssistant, pendingIds, inspectedSinceMessages);
  // An approval or question this tab still offers that the session no longer waits for (read after the part arrived).
  const staleApproval = inspectedSinceMessages && offersStaleRequest(messages, pendingIds);
  // A turn that started and ended between two reads of the session (a queued message answered quickly) is in the store only.
  // Counted from the stored conversation the chat was mounted with, not from the session's snapshot: the two are read
  // apart, and a turn that ran between the reads (a fork's first turn, say) is in the snapshot's count only.
  const turnsSynced = useRef(turnsShownBy(props.initial.messages));
  const shownTurns = useMemo(() => turnsShownBy(messages), [messages]);
  const missedTurn = live.turnCount > Math.max(turnsSynced.current, shownTurns);
  const shouldFollow = (activeTurn !== null && !waitingForPerson) || staleApproval || missedTurn;
  useEffect(() => {
    if (requestActive || disconnected || !shouldFollow) return;
    const wait = Math.max(0, 2000 - (Date.now() - lastSyncAt.current));
    const turnCount = live.turnCount;
    const timer = window.setTimeout(() => {
      turnsSynced.current = Math.max(turnsSynced.current, turnCount);
      resync(activeTurn !== null ? `following ${activeTurn}` : staleApproval ? "an approval was answered elsewhere" : `reading turn ${turnCount}, which ran between two reads`);
    }, wait);
    return () => window.clearTimeout(timer);
  }, [requestActive, disconnected, shouldFollow, activeTurn, staleApproval, live.loadedAt, live.turnCount, resync]);

  // A stopped or finished Flow runs no more turns: close a stream that still waits on one.
  const flowEnded = live.flowStatus !== undefined && live.flowStatus !== "running";
  const { stop } = chat;
  useEffect(() => {
    if (flowEnded && requestActive) void stop();
  }, [flowEnded, requestActive, stop]);

  const busy = requestActive || activeTurn !== null || asksPerson(messages.at(-1));

  const send = (text: string): void => {
    // "Plan first" applies to the message it is sent with.
    setPlanMode(false);
    if (busy) {
      void queue.queueMessage(text, planMode);
      return;
    }
    if (status === "error") clearError();
    lastSyncAt.current = Date.now();
    void sendMessage({ text }, planMode ? { body: { planMode: true } } : undefined).then(onActivity);
  };

  const respondToApproval = (approvalId: string, approved: boolean, reason?: string): void => {
    void addToolApprovalResponse(reason === undefined ? { id: approvalId, approved } : { id: approvalId, approved, reason });
  };

  const respondToQuestion = questionAnswerHandler({
    sessionId, requestActive, onActivity,
    setAnswers: setLocalAnswers,
    sendWithResponse: (interruptId, response) => {
      if (status === "error") clearError();
      lastSyncAt.current = Date.now();
      setMessages(withQuestionResponse(messages, interruptId, response));
      void sendMessage().then(onActivity);
    },
  });

  const executePlan = async (revision: number): Promise<boolean> => {
    const { executed } = await api.executePlan(sessionId, revision);
    onActivity();
    return executed;
  };

  // Keep the newest message in view while the reader is at the bottom.
  const scroller = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  useLayoutEffect(() => {
    const element = scroller.current;
    if (element !== null && stickToBottom.current) element.scrollTop = element.scrollHeight;
  }, [messages, status, queue.localQueue, live.queuedMessages.length]);

  const streamingMessageId = requestActive && messages.at(-1)?.role === "assistant" ? (messages.at(-1)?.id ?? null) : null;
  // The streamed answer reaches a screen reader once, at its end, rather than word by word: when the
  // request ends, even if the whole answer arrived in one render. A stream that goes on after an
  // approval announces only what it added.
  const wasRequestActive = useRef(false);
  const announcedText = useRef(new Map<string, string>());
  useEffect(() => {
    const ended = wasRequestActive.current && !requestActive;
    wasRequestActive.current = requestActive;
    const answer = messages.at(-1);
    if (!ended || answer?.role !== "assistant") return;
    const text = answer.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(" ");
    const known = announcedText.current.get(answer.id) ?? "";
    announcedText.current.set(answer.id, text);
    const added = (text.startsWith(known) ? text.slice(known.length) : text).trim();
    if (added !== "") announce(`The agent answered: ${added}`);
  }, [requestActive, messages]);
  const snapshotTurn = live.flowStatus === "running" ? live.activeTurnId : null;
  const stoppableTurn = turnToStop(snapshotTurn, streamingMessageId === null ? null : turnIdOfMessage(streamingMessageId));
  // A turn the snapshot has not seen yet started in this release, as the tab's own stream shows: it takes Stop.
  const stoppable = live.acceptsTurnControl || (stoppableTurn !== null && stoppableTurn !== snapshotTurn);
  const shownOutcomes = useMemo(() => withLocalStops(turnOutcomes, stoppedTurns, stoppableTurn), [turnOutcomes, stoppedTurns, stoppableTurn]);
  const closedReason = live.flowStatus === undefined || live.flowStatus === "running" ? null : `This session is ${live.flowStatus}; start a new one to keep chatting.`;
  const streamedTurnError = status === "error" && !disconnected && error !== undefined ? errorTextOf(error) : undefined;
  // After a reload the stream's error is gone; the stored state still says the last turn failed.
  const storedTurnError = !requestActive && live.activeTurnId === null && live.lastTurnError !== null ? live.lastTurnError : undefined;
  const turnError = streamedTurnError ?? storedTurnError;
  const planModeRefused = turnError?.includes("does not enable plan mode") === true;
  useEffect(() => {
    if (planModeRefused) {
      setPlanModeRefusedOnce(true);
      setPlanMode(false);
    }
  }, [planModeRefused]);
  const plan = wirePlanOf(live.plan);
  const idle = live.flowStatus === "running" && live.agentStatus === "waiting_for_user_message" && live.activeTurnId === null
    && live.pendingInterrupts.length === 0 && live.queuedMessages.length === 0 && !requestActive;

  return (
    <div className="chat">
      <div
        className="chat-scroll"
        ref={scroller}
        onScroll={(event) => {
          const element = event.currentTarget;
          stickToBottom.current = element.scrollHeight - element.scrollTop - element.clientHeight < 80;
        }}
      >
        <div className="chat-column">
          {messages.length === 0 && !requestActive && (
            <div className="chat-empty">
              <div className="chat-empty-mark" aria-hidden="true">P</div>
              <h2>Start the conversation</h2>
              <p className="muted">Every turn runs as durable Steps: stop the server mid-answer, start it again, and the turn carries on.</p>
              <button type="button" className="button" onClick={() => send("Hello! What can you do?")} disabled={closedReason !== null}>Say hello</button>
            </div>
          )}
          <MessageList
            messages={messages}
            streamingMessageId={streamingMessageId}
            toolRecords={live.toolCalls}
            onApprovalResponse={respondToApproval}
            onQuestionResponse={respondToQuestion}
            approvalsDisabled={requestActive || closedReason !== null}
            questionsDisabled={closedReason !== null}
            localAnswers={localAnswers}
            turnOutcomes={shownOutcomes}
            onFork={props.onFork}
            forkDisabled={requestActive}
          />
          {status === "submitted" && messages.at(-1)?.role === "user" && (
            <div className="message message-assistant">
              <div className="avatar" aria-hidden="true">P</div>
              <div className="assistant-body"><TypingDots /></div>
            </div>
          )}
          {flowEnded && live.activeTurnId !== null && (
            <div className="turn-notice">The session was {live.flowStatus} while {live.activeTurnId.replace("-", " ")} ran; that turn will not finish.</div>
          )}
          {turnError !== undefined && (
            <div className="turn-error" role="alert">
              {planModeRefused ? <><strong>Plan mode is off for this agent.</strong> Send the message again without it.</> : <><strong>The turn failed.</strong> {turnError}</>}
            </div>
          )}
        </div>
      </div>
      {disconnected && (
        <div className="connection-banner" role="status">
          <span className="spinner" aria-hidden="true" /> Connection lost. Reconnecting{retryIn !== null ? ` in ${Math.round(retryIn / 1000)}s` : ""}…
          <button type="button" className="button button-ghost small" onClick={() => void resumeStream()}>Retry now</button>
        </div>
      )}
      <div className="chat-footer">
        <div className="chat-column">
          <PlanView plan={plan} idle={idle} onExecute={executePlan} />
          <QueuedMessages
            queued={live.queuedMessages}
            steered={live.steeredMessages}
            local={queue.localQueue}
            actions={queue.actions}
            canSteer={activeTurn !== null && live.acceptsTurnControl && closedReason === null}
            onSteer={queue.steer}
            onDelete={queue.remove}
            onDismiss={queue.dismiss}
          />
          <Composer
            sessionId={sessionId}
            busy={busy}
            closedReason={closedReason}
            onSend={send}
            planMode={planModeAvailable ? { enabled: planMode, onChange: setPlanMode } : undefined}
            controls={<TurnControls sessionId={sessionId} activeTurnId={stoppableTurn} acceptsTurnControl={stoppable} onStopped={onTurnStopped} onActivity={onActivity} />}
          />
        </div>
      </div>
    </div>
  );
}
