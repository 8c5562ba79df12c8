/**
 * `perdure`: the dev server as a library, for applications that mount the
 * same HTTP API in their own server.
 *
 * @example
 * import { createDevApp, allowLoopbackOnly } from "perdure";
 * const app = createDevApp({ client, flows: new Map([[flow.flowType, flow]]), authorize: allowLoopbackOnly });
 */
export { allowLoopbackOnly, createDevApp } from "./server/create-dev-app.ts";
export type { AuthorizeRequest, DevAppOptions, SessionAccess } from "./server/create-dev-app.ts";
export { inspectSession, buildTimeline } from "./server/session-inspection.ts";
export type { SessionInspection, TimelineExecution } from "./server/session-inspection.ts";
export { startDevServer } from "./commands/dev.ts";
export type { DevCommandOptions, RunningDevServer } from "./commands/dev.ts";
