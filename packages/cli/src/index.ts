/**
 * `perdure`: the dev server as a library, for applications that mount the
 * same HTTP API in their own server.
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
export { createDevApp, maxChatBodyBytes, maxSmallBodyBytes } from "./server/create-dev-app.ts";
export type { AuthorizeRequest, DevAppOptions, SessionAccess } from "./server/create-dev-app.ts";
export { allowedHostsFor } from "./server/dev-access.ts";
export type { DevAccess } from "./server/dev-access.ts";
export { inspectSession, buildTimeline } from "./server/session-inspection.ts";
export type { SessionInspection, TimelineExecution } from "./server/session-inspection.ts";
export { startDevServer } from "./commands/dev.ts";
export { DevServerListenError } from "./commands/dev.ts";
export type { DevCommandOptions, RunningDevServer } from "./commands/dev.ts";
