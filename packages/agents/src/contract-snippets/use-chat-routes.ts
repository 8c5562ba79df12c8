/**
 * The contract's `useChat` server routes, with only their import paths
 * changed; `client`, `flow` and `authorizeSession` come from the snippet
 * environment.
 */
import { authorizeSession, client, flow } from "./snippet-environment.ts";

// ---- the contract's snippet ----
import {
agentResumeTokenHeaderName,
createAgentUIMessageStreamResponse,
readAgentSessionUIMessages,
readAgentToolApprovalResponses,
resolveAgentToolApprovalsWithUIMessageStream,
sendAgentUserMessageWithUIMessageStream,
} from "@perdure/agents/ui-stream";
import type { UIMessage } from "ai";
// GET /api/chat/:id: the stored messages and the active turn's resume token.
export async function getChat(request: Request, sessionId: string): Promise<Response> {
await authorizeSession(request, sessionId);
return Response.json(await readAgentSessionUIMessages({ client, flow, flowId: sessionId }));
}
// POST /api/chat: useChat sends a user message, or the answers to tool approvals.
export async function postChat(request: Request): Promise<Response> {
const { id, messages } = (await request.json()) as { id: string; messages: UIMessage[] };
await authorizeSession(request, id);
const lastMessage = messages.at(-1);
if (lastMessage?.role === "assistant") {
return resolveAgentToolApprovalsWithUIMessageStream({
client, flow, flowId: id,
approvals: readAgentToolApprovalResponses(lastMessage),
signal: request.signal,
});
}
const text = (lastMessage?.parts ?? [])
.flatMap((part) => (part.type === "text" ? [part.text] : []))
.join("");
return sendAgentUserMessageWithUIMessageStream({ client, flow, flowId: id, text, signal: request.signal });
}
// GET /api/chat/:id/stream: useChat reconnects.
export async function getChatStream(request: Request, sessionId: string): Promise<Response> {
await authorizeSession(request, sessionId);
return createAgentUIMessageStreamResponse({
client, flow, flowId: sessionId,
resumeToken: request.headers.get(agentResumeTokenHeaderName) ?? undefined,
signal: request.signal,
});
}
// ---- end of the snippet ----
