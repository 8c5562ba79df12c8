/**
 * `@perdure/agents/http`: the session HTTP API as one Fetch handler, to
 * mount in any server that speaks `Request` and `Response` (Hono, Next.js
 * route handlers, `@hono/node-server`, Bun, Deno). It serves what
 * `perdure dev` serves: sessions, chat for `useChat` with resume, plain SSE,
 * snapshots, approvals, questions, plans, turn control, settings and
 * inspection, described by `GET /openapi.json`. `authorize` names the
 * caller; each session belongs to the principal that created it.
 *
 * @example
 * import { Client } from "@perdure/engine";
 * import { createAgentHttpHandler } from "@perdure/agents/http";
 * import { Hono } from "hono";
 *
 * const handler = createAgentHttpHandler({
 *   client: new Client({ store }),
 *   flows: [supportAgent],
 *   basePath: "/api",
 *   authorize: ({ request }) => {
 *     const user = usersByToken.get(request.headers.get("authorization") ?? "");
 *     return user === undefined ? Response.json({ error: "unknown token" }, { status: 401 }) : { principal: user.id };
 *   },
 * });
 * const app = new Hono();
 * app.all("/api/*", (context) => handler(context.req.raw));
 */
export { createAgentHttpHandler } from "./create-agent-http-handler.ts";
export type { AgentHttpHandler } from "./create-agent-http-handler.ts";
export { loopbackPrincipal } from "./agent-http-options.ts";
export type { AgentHttpAuthorize, AgentHttpAuthorizeRequest, AgentHttpCaller, AgentHttpHandlerOptions, AgentHttpLimits } from "./agent-http-options.ts";
export { agentHttpActions } from "./agent-http-actions.ts";
export type { AgentHttpAction } from "./agent-http-actions.ts";
export { agentHttpOpenApiDocument } from "./openapi-document.ts";
export { httpPrincipalInputKey, principalOfStartInput } from "./session-owner.ts";
export { newForkSessionId, readForkSessionRequest } from "./fork-request.ts";
export type { ForkSessionRequest } from "./fork-request.ts";
export { buildTimeline, inspectSession } from "./session-inspection.ts";
export type { SessionInspection, TimelineExecution } from "./session-inspection.ts";
export type { InspectedMessageChunk, InspectedMessageStorage } from "./message-storage-view.ts";
