/**
 * The AI SDK's own chat client in Node: `AbstractChat` with a plain state,
 * `DefaultChatTransport` over real HTTP, and the browser habits of the
 * contract's `useChat` example (the latest resume token kept in memory and
 * sent in a header on reconnect). The transport's fetch records every part
 * each response delivered, and reports a dropped connection as browsers do
 * (`TypeError: network error`; Node says `terminated`), so the chat keeps its
 * streaming state for an exact continuation.
 */
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  type FinishReason,
  type UIMessage,
  type UIMessageChunk,
} from "ai";
import { pollUntil } from "@perdure/engine/testing";
import { agentResumeTokenHeaderName } from "../agent-ui-stream-token.ts";

class PlainChatState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[];

  constructor(messages: UIMessage[]) {
    this.messages = messages;
  }

  pushMessage = (message: UIMessage): void => {
    this.messages = [...this.messages, message];
  };

  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
  };

  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = this.messages.map((existing, position) => (position === index ? message : existing));
  };

  snapshot = <TValue>(value: TValue): TValue => structuredClone(value);
}

/** What the transport's callbacks read; set through the chat's accessors. */
interface ChatSettings {
  token: string | undefined;
  continueOnReconnect: boolean;
  sendTokenWithApprovals: boolean;
}

/** What one HTTP response delivered. */
export interface RecordedResponse {
  method: string;
  url: string;
  status: number;
  /** Every `data:` frame, in order, tokens included. */
  chunks: UIMessageChunk[];
}

/** A chat in Node with the recording transport. */
export class TestChat extends AbstractChat<UIMessage> {
  readonly responses: RecordedResponse[];
  readonly finishReasons: (FinishReason | undefined)[];
  private readonly settings: ChatSettings;

  constructor(options: { baseUrl: string; chatId: string; messages?: UIMessage[]; resumeToken?: string | null; onError?: (error: Error) => void }) {
    const responses: RecordedResponse[] = [];
    const finishReasons: (FinishReason | undefined)[] = [];
    const settings: ChatSettings = { token: options.resumeToken ?? undefined, continueOnReconnect: false, sendTokenWithApprovals: false };
    const init: Omit<ChatInit<UIMessage>, "messages"> & { state: ChatState<UIMessage> } = {
      id: options.chatId,
      state: new PlainChatState(options.messages ?? []),
      onData: (part) => {
        if (part.type === "data-agent-resume-token") settings.token = part.data as string;
      },
      onFinish: ({ finishReason }) => {
        finishReasons.push(finishReason);
      },
      onError: options.onError ?? (() => undefined),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      transport: new DefaultChatTransport({
        api: `${options.baseUrl}/api/chat`,
        fetch: recordingFetch(responses),
        prepareSendMessagesRequest: ({ body, id, messages, trigger, messageId }) => ({
          api: `${options.baseUrl}/api/chat${settings.sendTokenWithApprovals ? "?withToken=1" : ""}`,
          body: { ...body, id, messages, trigger, messageId },
          headers: settings.sendTokenWithApprovals && settings.token !== undefined ? { [agentResumeTokenHeaderName]: settings.token } : {},
        }),
        prepareReconnectToStreamRequest: ({ id }) => ({
          api: `${options.baseUrl}/api/chat/${encodeURIComponent(id)}/stream${settings.continueOnReconnect ? "?continue=1" : ""}`,
          headers: settings.token === undefined ? {} : { [agentResumeTokenHeaderName]: settings.token },
        }),
      }),
    };
    super(init);
    this.responses = responses;
    this.finishReasons = finishReasons;
    this.settings = settings;
  }

  /** The latest resume token the chat received; the next reconnect sends it. */
  get resumeToken(): string | undefined {
    return this.settings.token;
  }

  set resumeToken(token: string | undefined) {
    this.settings.token = token;
  }

  /** Whether the next reconnect asks to continue exactly after the token. */
  get continueOnReconnect(): boolean {
    return this.settings.continueOnReconnect;
  }

  set continueOnReconnect(value: boolean) {
    this.settings.continueOnReconnect = value;
  }

  /** Whether approval requests carry the latest token too. */
  get sendTokenWithApprovals(): boolean {
    return this.settings.sendTokenWithApprovals;
  }

  set sendTokenWithApprovals(value: boolean) {
    this.settings.sendTokenWithApprovals = value;
  }

  /** The last message, which must be the assistant's. */
  get assistantMessage(): UIMessage {
    const message = this.messages.at(-1);
    if (message?.role !== "assistant") throw new Error(`the chat's last message is ${JSON.stringify(message)}, not the assistant's`);
    return message;
  }

  /** Waits until no request is in flight. */
  async waitUntilSettled(timeoutMs = 15_000): Promise<void> {
    await pollUntil(async () => (this.status === "ready" || this.status === "error" ? true : undefined), { timeoutMs, intervalMs: 10, description: `chat ${this.id} to settle` });
  }
}

/** Parses `data:` frames of a Server-Sent Events text. */
function parseDataFrames(text: string): { chunks: UIMessageChunk[]; rest: string } {
  const chunks: UIMessageChunk[] = [];
  const frames = text.split("\n\n");
  const rest = frames.pop() ?? "";
  for (const frame of frames) {
    for (const line of frame.split("\n")) {
      if (line.startsWith("data: ") && line !== "data: [DONE]") chunks.push(JSON.parse(line.slice(6)) as UIMessageChunk);
    }
  }
  return { chunks, rest };
}

function recordingFetch(responses: RecordedResponse[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = input instanceof Request ? input.url : input.toString();
    const record: RecordedResponse = { method: init?.method ?? "GET", url, status: response.status, chunks: [] };
    responses.push(record);
    if (response.body === null) return response;
    const decoder = new TextDecoder();
    let buffered = "";
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const next = await reader.read();
          if (next.done) {
            controller.close();
            return;
          }
          const parsed = parseDataFrames(buffered + decoder.decode(next.value, { stream: true }));
          buffered = parsed.rest;
          record.chunks.push(...parsed.chunks);
          controller.enqueue(next.value);
        } catch (error) {
          // A browser reports a dropped response body as a network error.
          controller.error(error instanceof TypeError ? new TypeError("network error", { cause: error }) : error);
        }
      },
      async cancel(reason) {
        await reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The parts of recorded chunks, without the resume token parts. */
export function partsOf(chunks: readonly UIMessageChunk[]): UIMessageChunk[] {
  return chunks.filter((chunk) => chunk.type !== "data-agent-resume-token");
}

/** A message as JSON (drops `undefined` fields the AI SDK leaves on parts). */
export function plain<TValue>(value: TValue): TValue {
  return JSON.parse(JSON.stringify(value)) as TValue;
}
