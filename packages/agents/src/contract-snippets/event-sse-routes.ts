/**
 * The contract's plain Server-Sent Events routes, with only their import
 * paths changed; `client`, `flow` and `authorizeSession` come from the
 * snippet environment.
 */
import { authorizeSession, client, flow } from "./snippet-environment.ts";

// ---- the contract's snippet ----
import {
convertAgentEventStreamSnapshotToJson,
createAgentEventSseResponse,
readAgentEventStreamSnapshot,
} from "@perdure/agents/ui-stream";
// GET /sessions/:id/snapshot
export async function getSnapshot(request: Request, sessionId: string): Promise<Response> {
await authorizeSession(request, sessionId);
const value = await readAgentEventStreamSnapshot({ client, flow, flowId: sessionId });
return Response.json(convertAgentEventStreamSnapshotToJson(value));
}
// GET /sessions/:id/events
export async function getEvents(request: Request, sessionId: string): Promise<Response> {
await authorizeSession(request, sessionId);
const resumeToken =
request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("resumeToken") ?? "";
return createAgentEventSseResponse({ client, flow, flowId: sessionId, resumeToken, signal: request.signal });
}
// ---- end of the snippet ----
