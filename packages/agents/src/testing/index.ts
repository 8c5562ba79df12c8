/**
 * `@perdure/agents/testing`: a private engine, killable Worker processes,
 * waits and fakes for tests of agent sessions.
 *
 * @example
 * import { AgentTestEnvironment, KillableWorkerProcess, PrivateEngine, pollUntil } from "@perdure/agents/testing";
 *
 * const engine = await PrivateEngine.start();
 * const worker = await KillableWorkerProcess.start({ entryModulePath: "./agent-worker-main.ts", engineAddress: engine.address });
 * const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [sessionFlow], isWorkerInProcess: false });
 * await environment.client.start(sessionFlow, "session-1", {});
 * await pollUntil(async () => (await environment.client.describe("session-1")).status === "completed");
 * await worker.stop();
 * await environment.close();
 * await engine.stop();
 */
export { PrivateEngine } from "./private-engine.ts";
export type { PrivateEngineOptions } from "./private-engine.ts";
export { openStoreAtAddress } from "./open-store-at-address.ts";
export { KillableWorkerProcess } from "./killable-worker-process.ts";
export type { KillableWorkerProcessOptions } from "./killable-worker-process.ts";
export { runAgentWorkerProcess } from "./run-agent-worker-process.ts";
export type { RunAgentWorkerProcessOptions } from "./run-agent-worker-process.ts";
export { agentWorkerReadyLine, engineAddressEnvironmentVariable } from "./worker-process-protocol.ts";
export { AgentTestEnvironment } from "./agent-test-environment.ts";
export type { AgentTestEnvironmentOptions } from "./agent-test-environment.ts";
export { readStepHistory } from "./read-step-history.ts";
export type { StepHistoryRecord } from "./read-step-history.ts";
export { FileGate } from "./file-gate.ts";
export type { FileGateArrival, FileGateWaitUntilOpenOptions, FileGateWaitUntilReachedOptions } from "./file-gate.ts";
export { InvocationLog } from "./invocation-log.ts";
export type { InvocationLogEntry } from "./invocation-log.ts";
export { pollUntil } from "@perdure/engine/testing";
export type { PollUntilOptions } from "@perdure/engine/testing";
export { awaitBoundaryKillStartSignal, formatBoundaryKillReport, runBoundaryKillLoop } from "@perdure/engine/testing";
export type { BoundaryKillLoopOptions, BoundaryKillReport, BoundaryKillRunResult, BoundaryKillScenario } from "@perdure/engine/testing";
export { assertAgentSessionInvariants } from "./agent-session-invariants.ts";
export { findFreeLoopbackPorts } from "./find-free-loopback-ports.ts";
export { replaySession } from "./replay/replay-session.ts";
export type { ReplaySessionOptions } from "./replay/replay-session.ts";
export type { ReplayDivergence, ReplayReport } from "./replay/replay-divergence.ts";
export { AgentSessionTestClient } from "./agent-session-test-client.ts";
export type { AgentSessionWaitOptions } from "./agent-session-test-client.ts";
export { ScriptedModelClient } from "../stepwise/scripted-model-client.ts";
export type { ScriptedModelClientOptions, ScriptedModelReply } from "../stepwise/scripted-model-client.ts";
export { ScriptedAgentRunner } from "./scripted-agent-runner.ts";
export type { ScriptedTool, ScriptInput, ScriptReply } from "./scripted-agent-runner.ts";
export {
  conformanceFlowType,
  conformanceGateNames,
  conformanceModelFailure,
  conformanceQuestion,
  conformanceToolFailure,
  conformanceUserTexts,
  runnerConformanceDirectoryEnvironmentVariable,
  runnerConformanceSetup,
  runRunnerConformanceTests,
  runRunnerConformanceWorker,
} from "./runner-conformance/index.ts";
export type {
  ConformanceModel,
  ConformanceModelInput,
  ConformanceModelReply,
  ConformanceTool,
  ConformanceToolRun,
  RunnerConformanceSetup,
  RunnerConformanceSubject,
} from "./runner-conformance/index.ts";
