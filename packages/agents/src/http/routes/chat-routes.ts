/**
 * The routes `useChat` talks to: the session's messages, a new message or
 * the decisions of an assistant message, and the resumable stream of the
 * active turn.
 */
import { readAgentQuestionResponses } from "../../ui-stream/agent-question-responses.ts";
import { resolveAgentToolApprovalsWithUIMessageStream } from "../../ui-stream/agent-tool-approval-stream.ts";
import { readAgentToolApprovalResponses } from "../../ui-stream/agent-tool-approvals.ts";
import { createAgentUIMessageStreamResponse, sendAgentUserMessageWithUIMessageStream } from "../../ui-stream/agent-ui-message-stream-responses.ts";
import { readAgentSessionUIMessages } from "../../ui-stream/agent-ui-messages.ts";
import { agentResumeTokenHeaderName } from "../../ui-stream/agent-ui-stream-token.ts";
import type { AgentHttpRoute } from "../agent-http-route.ts";
import { readChatRequest } from "../request-values.ts";
import { sessionOfPath } from "./session-routes.ts";

export const chatRoutes: readonly AgentHttpRoute[] = [
  {
    method: "GET", path: "/chat/:id", action: "getChatMessages",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      return Response.json(await readAgentSessionUIMessages({ client: context.options.client, flow, flowId: sessionId }));
    },
  },
  {
    method: "POST", path: "/chat", action: "sendChatMessage", bodyLimit: "chat",
    handle: async (context) => {
      const { sessionId, message } = readChatRequest(await context.readBody());
      const { flow } = await context.ownedSession(sessionId);
      const { client } = context.options;
      const { signal } = context.request;
      if (message.role === "assistant") {
        return resolveAgentToolApprovalsWithUIMessageStream({
          client, flow, flowId: sessionId, signal,
          approvals: readAgentToolApprovalResponses(message.message),
          questionResponses: readAgentQuestionResponses(message.message),
        });
      }
      return sendAgentUserMessageWithUIMessageStream({ client, flow, flowId: sessionId, text: message.text, planMode: message.planMode, messageId: message.messageId, signal });
    },
  },
  {
    method: "GET", path: "/chat/:id/stream", action: "resumeChatStream",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      const resumeToken = context.request.headers.get(agentResumeTokenHeaderName);
      return createAgentUIMessageStreamResponse({ client: context.options.client, flow, flowId: sessionId, signal: context.request.signal, ...(resumeToken === null ? {} : { resumeToken }) });
    },
  },
];
