"use client";
/**
 * The chat page: the signed-in user's sessions, and `useChat` on the one
 * picked, with the session ID as the chat ID. Approvals are answered with
 * `addToolApprovalResponse` and sent back automatically; questions are
 * answered by setting a response on the question's data part and sending
 * the message again. After every stream the page reads the stored
 * conversation, and follows the active turn if there is one, so a turn that
 * a Worker finished while the stream waited (or after a reload) shows up.
 */
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";

type Part = UIMessage["parts"][number];

interface ListedSession {
  sessionId: string;
  pendingApprovals: number;
  pendingQuestions: number;
}

interface StoredChat {
  messages: UIMessage[];
  resumeToken: string | null;
}

interface QuestionData {
  interruptId: string;
  question: string;
  choices: string[];
  response?: { answer: string } | { declined: true };
}

async function api<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(path, init);
  if (!response.ok) throw new Error(`${init?.method ?? "GET"} ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

function questionOf(part: Part): QuestionData | undefined {
  if (part.type !== "data-agent-question" || !("data" in part)) return undefined;
  const data = part.data as Partial<QuestionData> | null;
  return typeof data?.interruptId === "string" && typeof data.question === "string" && Array.isArray(data.choices) ? (data as QuestionData) : undefined;
}

function resolvedQuestions(messages: UIMessage[]): Set<string> {
  const resolved = new Set<string>();
  for (const part of messages.flatMap((message) => message.parts)) {
    if (part.type === "data-agent-question-resolution" && "data" in part) resolved.add(String((part.data as { interruptId?: unknown }).interruptId));
  }
  return resolved;
}

function withQuestionResponse(messages: UIMessage[], interruptId: string, answer: string): UIMessage[] {
  return messages.map((message) => ({
    ...message,
    parts: message.parts.map((part) => {
      const question = questionOf(part);
      return question?.interruptId === interruptId ? ({ ...part, data: { ...question, response: { answer } } } as Part) : part;
    }),
  }));
}

export function Chat({ user }: { user: string }) {
  const [sessions, setSessions] = useState<ListedSession[]>([]);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);

  const refresh = useCallback(async () => {
    const listed = await api<{ sessions: ListedSession[] }>("/api/sessions");
    setSessions(listed.sessions);
  }, []);
  useEffect(() => {
    refresh().catch((error: unknown) => setProblem(String(error)));
  }, [refresh]);

  const newChat = async (): Promise<void> => {
    const created = await api<{ sessionId: string }>("/api/sessions", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    await refresh();
    setSelected(created.sessionId);
  };

  return (
    <main>
      <aside>
        <p>
          Signed in as <strong data-testid="user">{user}</strong>
        </p>
        <form method="post" action="/sign-out">
          <button type="submit">Sign out</button>
        </form>
        <h2>Sessions</h2>
        <button type="button" onClick={() => void newChat().catch((error: unknown) => setProblem(String(error)))}>
          New chat
        </button>
        <ul aria-label="sessions">
          {sessions.map((session) => (
            <li key={session.sessionId}>
              <button type="button" aria-current={session.sessionId === selected} onClick={() => setSelected(session.sessionId)}>
                {session.sessionId}
                {session.pendingApprovals > 0 ? " (needs approval)" : session.pendingQuestions > 0 ? " (needs an answer)" : ""}
              </button>
            </li>
          ))}
        </ul>
        {problem === undefined ? null : <p role="alert">{problem}</p>}
      </aside>
      <section className="chat">{selected === undefined ? <p>Start a new chat, or pick one.</p> : <Conversation key={selected} sessionId={selected} onActivity={() => void refresh()} />}</section>
    </main>
  );
}

function Conversation({ sessionId, onActivity }: { sessionId: string; onActivity: () => void }) {
  const [stored, setStored] = useState<StoredChat | undefined>(undefined);
  const [failure, setFailure] = useState<string | undefined>(undefined);
  useEffect(() => {
    api<StoredChat>(`/api/chat/${encodeURIComponent(sessionId)}`).then(setStored, (error: unknown) => setFailure(String(error)));
  }, [sessionId]);
  if (failure !== undefined) return <p role="alert">{failure}</p>;
  return stored === undefined ? <p>Loading…</p> : <ConversationView sessionId={sessionId} initial={stored} onActivity={onActivity} />;
}

function ConversationView({ sessionId, initial, onActivity }: { sessionId: string; initial: StoredChat; onActivity: () => void }) {
  const transport = useMemo(
    () =>
      new DefaultChatTransport<UIMessage>({
        api: "/api/chat",
        // The session keeps the conversation: send only the newest message (or the approvals and answers on it).
        prepareSendMessagesRequest: ({ id, messages, body }) => ({ body: { ...body, id, messages: messages.slice(-1) } }),
        prepareReconnectToStreamRequest: ({ id }) => ({ api: `/api/chat/${encodeURIComponent(id)}/stream` }),
      }),
    [],
  );
  const { messages, status, error, sendMessage, setMessages, resumeStream, addToolApprovalResponse } = useChat<UIMessage>({
    id: sessionId,
    messages: initial.messages,
    resume: initial.resumeToken !== null,
    transport,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [text, setText] = useState("");

  // After each stream (and on errors), read the stored conversation; follow the turn while one is active.
  const busy = status === "submitted" || status === "streaming";
  const syncing = useRef(false);
  const activity = useRef(onActivity);
  activity.current = onActivity;
  useEffect(() => {
    if (busy) return;
    const timer = window.setTimeout(() => {
      if (syncing.current) return;
      syncing.current = true;
      api<StoredChat>(`/api/chat/${encodeURIComponent(sessionId)}`)
        .then((latest) => {
          setMessages(latest.messages);
          activity.current();
          if (latest.resumeToken !== null) void resumeStream();
        })
        .catch(() => undefined)
        .finally(() => {
          syncing.current = false;
        });
    }, 1000);
    return () => window.clearTimeout(timer);
  }, [busy, sessionId, setMessages, resumeStream]);

  const resolved = resolvedQuestions(messages);
  const answer = (interruptId: string, choice: string): void => {
    setMessages(withQuestionResponse(messages, interruptId, choice));
    void sendMessage();
  };

  return (
    <>
      <h2>
        Session <code data-testid="session-id">{sessionId}</code>
      </h2>
      {messages.map((message) => (
        <div key={message.id} className={`message ${message.role}`} data-role={message.role}>
          {message.parts.map((part, index) => {
            if (part.type === "text") return <p key={index}>{part.text}</p>;
            if (part.type === "dynamic-tool") {
              return (
                <div key={index} className="tool" data-testid={`tool-${part.toolName}`} data-state={part.state}>
                  <strong>{part.toolName}</strong> {JSON.stringify(part.input)} <em>{part.state}</em>
                  {part.state === "approval-requested" ? (
                    <span>
                      {" "}
                      <button type="button" onClick={() => void addToolApprovalResponse({ id: part.approval.id, approved: true })}>
                        Approve
                      </button>{" "}
                      <button type="button" onClick={() => void addToolApprovalResponse({ id: part.approval.id, approved: false, reason: "The user declined." })}>
                        Deny
                      </button>
                    </span>
                  ) : null}
                  {part.state === "output-available" ? <div data-testid="tool-output">{typeof part.output === "string" ? part.output : JSON.stringify(part.output)}</div> : null}
                </div>
              );
            }
            const question = questionOf(part);
            if (question !== undefined) {
              const open = question.response === undefined && !resolved.has(question.interruptId);
              return (
                <div key={index} className="question">
                  <p>{question.question}</p>
                  {question.choices.map((choice) => (
                    <button key={choice} type="button" disabled={!open || busy} onClick={() => answer(question.interruptId, choice)}>
                      {choice}
                    </button>
                  ))}
                </div>
              );
            }
            return null;
          })}
        </div>
      ))}
      {error === undefined ? null : <p role="alert">{error.message}</p>}
      <form
        className="composer"
        onSubmit={(event) => {
          event.preventDefault();
          if (text.trim() === "" || busy) return;
          void sendMessage({ text });
          setText("");
        }}
      >
        <input aria-label="message" value={text} onChange={(event) => setText(event.target.value)} placeholder="Ask to refund or exchange order 1002" />
        <button type="submit" disabled={busy}>
          Send
        </button>
      </form>
      <p data-testid="status">{status}</p>
    </>
  );
}
