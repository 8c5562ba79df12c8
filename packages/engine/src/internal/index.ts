/**
 * `@perdure/engine/internal`: hooks for Perdure's own packages, which release
 * together with the engine. Applications should not import it; what it
 * exports may change in any release.
 *
 * Today it holds the durable boundary hook that `@perdure/agents` marks its
 * session boundaries with, so one process counts the engine's and the
 * session's boundaries in one sequence (see `runBoundaryKillLoop` in
 * `@perdure/engine/testing`).
 *
 * @example
 * import { durableBoundary } from "@perdure/engine/internal";
 *
 * const outcome = await runner.runModelStep(turn);
 * durableBoundary("agent.model.before-record", context.flowId, context.stepType);
 */
export { boundaryTraceEnvironmentVariable, durableBoundary, killAtBoundaryEnvironmentVariable } from "./durable-boundary.ts";
export type { DurableBoundaryName, DurableBoundaryTraceEntry } from "./durable-boundary.ts";
export { withWorkerTimers } from "./local-timers.ts";
export type { LocalTimers } from "./local-timers.ts";
