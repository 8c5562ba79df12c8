/**
 * `perdure`: the dev server as a library. To serve sessions from your own
 * server, mount `createAgentHttpHandler` of `@perdure/agents/http` instead:
 * the dev app is that handler plus the web UI and the dev access token.
 *
 * @example
 * import { createDevApp } from "perdure";
 * const app = createDevApp({
 *   client,
 *   flows: new Map([[flow.flowType, flow]]),
 *   access: { token: process.env.API_TOKEN ?? null, port: 3000 },
 *   allowedHosts: ["localhost:3000", "127.0.0.1:3000"],
 * });
 */
export { createDevApp } from "./server/create-dev-app.ts";
export type { DevAppOptions } from "./server/create-dev-app.ts";
export { allowedHostsFor } from "./server/dev-access.ts";
export type { DevAccess } from "./server/dev-access.ts";
export { inspectSession, buildTimeline } from "@perdure/agents/http";
export type { SessionInspection, TimelineExecution } from "@perdure/agents/http";
export { startDevServer } from "./commands/dev.ts";
export { DevServerListenError } from "./commands/dev.ts";
export type { DevCommandOptions, RunningDevServer } from "./commands/dev.ts";
