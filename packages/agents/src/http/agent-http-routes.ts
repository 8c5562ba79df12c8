/** The route table of the session HTTP API: every route the handler serves, in one list the OpenAPI test reads. */
import type { AgentHttpRoute } from "./agent-http-route.ts";
import { agentHttpOpenApiDocument } from "./openapi-document.ts";
import { chatRoutes } from "./routes/chat-routes.ts";
import { forkRoutes } from "./routes/fork-routes.ts";
import { healthRoutes } from "./routes/health-routes.ts";
import { scheduleRoutes } from "./routes/schedule-routes.ts";
import { sessionRoutes } from "./routes/session-routes.ts";
import { turnControlRoutes } from "./routes/turn-control-routes.ts";

const openApiRoute: AgentHttpRoute = {
  method: "GET", path: "/openapi.json", action: "getOpenApiDocument", isPublic: true,
  handle: ({ options }) => Response.json(agentHttpOpenApiDocument(options.basePath)),
};

export const agentHttpRoutes: readonly AgentHttpRoute[] = [openApiRoute, ...healthRoutes, ...sessionRoutes, ...forkRoutes, ...chatRoutes, ...turnControlRoutes, ...scheduleRoutes];
