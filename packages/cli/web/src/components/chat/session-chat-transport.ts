// The chat's transport to the dev server: the AI SDK's DefaultChatTransport
// sending only the newest message, and the latest resume token on every
// reconnect. It also tells the chat when a reconnect finds no turn to follow
// (204), because `useChat` then just goes back to "ready" and keeps whatever
// it showed, while the turn it lost ended and its reply is only in the store.
import { agentResumeTokenHeaderName } from "@perdure/agents/contract/ui-stream";
import { DefaultChatTransport, type ChatTransport, type UIMessage, type UIMessageChunk } from "ai";
import { api } from "../../lib/api.ts";


/** Options of {@link SessionChatTransport}. */
export interface SessionChatTransportOptions {
  /** The latest resume token the chat received (undefined before the first), sent on every reconnect. */
  resumeToken: () => string | undefined;
  /** Called when a reconnect found no turn to follow (the server answered 204). */
  onNoTurnToFollow: () => void;
}

/**
 * `useChat`'s transport for one session of `perdure dev`.
 *
 * @example
 * const transport = new SessionChatTransport({ resumeToken: () => token.current, onNoTurnToFollow: () => reload() });
 */
export class SessionChatTransport extends DefaultChatTransport<UIMessage> {
  private readonly onNoTurnToFollow: () => void;

  constructor(options: SessionChatTransportOptions) {
    super({
      api: "/api/chat",
      // The session stores the conversation: send only the new message (or the approvals), not the whole history.
      prepareSendMessagesRequest: ({ id, messages, body, trigger, messageId }) => ({
        body: { ...body, id, messages: messages.slice(-1), trigger, messageId },
      }),
      prepareReconnectToStreamRequest: ({ id }) => {
        const resumeToken = options.resumeToken();
        return { api: api.chatStreamUrl(id), headers: resumeToken === undefined ? {} : { [agentResumeTokenHeaderName]: resumeToken } };
      },
    });
    this.onNoTurnToFollow = options.onNoTurnToFollow;
  }

  override async reconnectToStream(options: Parameters<ChatTransport<UIMessage>["reconnectToStream"]>[0]): Promise<ReadableStream<UIMessageChunk> | null> {
    const stream = await super.reconnectToStream(options);
    if (stream === null) this.onNoTurnToFollow();
    return stream;
  }
}
