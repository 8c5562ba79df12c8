/**
 * `@perdure/agents/ui-stream`: render a live agent session in a browser and
 * recover after a reconnect, from the session's `AgentEvents` Stream. The
 * resume position rides in a token the browser sends back; no other store is
 * needed. Three things are offered: an AI SDK UI message stream for
 * `useChat`, plain Server-Sent Events whose `id` is the engine resume token,
 * and snapshots as `UIMessage` objects or browser JSON. The helpers return
 * Fetch `Response` objects and do not depend on `ai` at runtime.
 *
 * The host application must check three things on every route, because the
 * session ID, the decisions and the token all come from the browser: that
 * the request is for this server and from its own pages
 * (`guardAgentRequest` refuses foreign `Host` headers, other origins and
 * non-JSON state-changing requests), who the caller is, and that the caller
 * may read or write the session it names. Bound the body before reading it.
 * The helpers only check that a decision answers an approval or a question
 * pending in the session's active turn. Questions, durable waits and plans
 * arrive as `data-agent-question`, `data-agent-question-resolution`,
 * `data-agent-timer` and `data-agent-plan` parts; the browser answers a
 * question by setting `response` on its part and sending the message back.
 * An MCP tool's progress and an MCP task's status arrive as
 * `data-agent-mcp-tool-progress` and `data-agent-mcp-task-status` parts.
 *
 * @example
 * import {
 *   agentResumeTokenHeaderName,
 *   createAgentUIMessageStreamResponse,
 *   guardAgentRequest,
 *   readAgentQuestionResponses,
 *   readAgentSessionUIMessages,
 *   readAgentToolApprovalResponses,
 *   resolveAgentToolApprovalsWithUIMessageStream,
 *   sendAgentUserMessageWithUIMessageStream,
 * } from "@perdure/agents/ui-stream";
 *
 * // GET /api/chat/:id
 * export async function getChat(request: Request, sessionId: string): Promise<Response> {
 *   await authorizeSession(request, sessionId);
 *   return Response.json(await readAgentSessionUIMessages({ client, flow, flowId: sessionId }));
 * }
 *
 * // POST /api/chat
 * export async function postChat(request: Request): Promise<Response> {
 *   const refusal = guardAgentRequest(request, { allowedHosts: ["localhost:3000"] });
 *   if (refusal !== null) return refusal;
 *   const { id, messages } = (await request.json()) as { id: string; messages: { role: string; parts: { type: string; text?: string }[] }[] };
 *   await authorizeSession(request, id);
 *   const lastMessage = messages.at(-1);
 *   if (lastMessage?.role === "assistant") {
 *     return resolveAgentToolApprovalsWithUIMessageStream({
 *       client, flow, flowId: id, signal: request.signal,
 *       approvals: readAgentToolApprovalResponses(lastMessage),
 *       questionResponses: readAgentQuestionResponses(lastMessage),
 *     });
 *   }
 *   const text = (lastMessage?.parts ?? []).flatMap((part) => (part.type === "text" ? [part.text ?? ""] : [])).join("");
 *   return sendAgentUserMessageWithUIMessageStream({ client, flow, flowId: id, text, signal: request.signal });
 * }
 *
 * // GET /api/chat/:id/stream
 * export async function getChatStream(request: Request, sessionId: string): Promise<Response> {
 *   await authorizeSession(request, sessionId);
 *   return createAgentUIMessageStreamResponse({
 *     client, flow, flowId: sessionId,
 *     resumeToken: request.headers.get(agentResumeTokenHeaderName) ?? undefined,
 *     signal: request.signal,
 *   });
 * }
 */
export {
  createAgentUIMessageStreamResponse,
  sendAgentUserMessageWithUIMessageStream,
  streamAgentUIMessageChunks,
} from "./agent-ui-message-stream-responses.ts";
export type { AgentUIMessageStreamOptions, SendAgentUserMessageWithUIMessageStreamOptions } from "./agent-ui-message-stream-responses.ts";
export { resolveAgentToolApprovalsWithUIMessageStream } from "./agent-tool-approval-stream.ts";
export type { ResolveAgentToolApprovalsWithUIMessageStreamOptions } from "./agent-tool-approval-stream.ts";
export { maxAgentToolApprovalDecisions, readAgentToolApprovalResponses, resolveAgentToolApproval } from "./agent-tool-approvals.ts";
export type { AgentToolApprovalResponse, ResolveAgentToolApprovalOptions } from "./agent-tool-approvals.ts";
export { answerAgentQuestion, maxAgentQuestionResponses, readAgentQuestionResponses, respondToAgentQuestion } from "./agent-question-responses.ts";
export type { AgentQuestionAnswerResult, AgentQuestionResponse, AnswerAgentQuestionOptions } from "./agent-question-responses.ts";
export { agentPlanPartId } from "../contract/ui-stream/data-parts.ts";
export type * from "../contract/ui-stream/data-parts.ts";
export { convertAgentSnapshotToUIMessages, readAgentSessionUIMessages } from "./agent-ui-messages.ts";
export type { ConvertAgentSnapshotOptions } from "./agent-ui-messages.ts";
export type { AgentSessionUIMessages } from "./agent-ui-messages.ts";
export { agentResumeTokenHeaderName, maxAgentUIStreamTokenLength } from "./agent-ui-stream-token.ts";
export { convertAgentEventStreamSnapshotToJson, readAgentEventStreamSnapshot } from "./agent-event-stream-snapshot.ts";
export type { AgentEventStreamSnapshot } from "./agent-event-stream-snapshot.ts";
export { createAgentEventSseResponse } from "./agent-event-sse.ts";
export { agentEventWriteTimesEventName } from "./agent-event-write-times.ts";
export { guardAgentRequest } from "./agent-request-guard.ts";
export type { AgentRequestGuardOptions } from "./agent-request-guard.ts";
export type { AgentEventSseOptions } from "./agent-event-sse.ts";
export { convertAgentEventToJson } from "./agent-event-json.ts";
export type { AgentUIStreamSessionOptions } from "./agent-ui-stream-session.ts";
export type {
  AgentDynamicToolUIPart,
  AgentEventChunk,
  AgentEventJson,
  AgentGrantedApproval,
  AgentResumeTokenChunk,
  AgentUIFinishReason,
  AgentUIMessage,
  AgentUIMessageChunk,
  AgentUIMessagePart,
} from "./agent-ui-message-types.ts";
