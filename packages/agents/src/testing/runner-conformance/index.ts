export { runRunnerConformanceTests } from "./run-runner-conformance.ts";
export type { RunnerConformanceSubject } from "./run-runner-conformance.ts";
export { runRunnerConformanceWorker, runnerConformanceDirectoryEnvironmentVariable } from "./run-runner-conformance-worker.ts";
export { conformanceFlowType, conformanceGateNames, conformanceModelFailure, conformanceQuestion, conformanceToolFailure, conformanceUserTexts, runnerConformanceSetup } from "./conformance-script.ts";
export type {
  ConformanceModel,
  ConformanceModelInput,
  ConformanceModelReply,
  ConformanceTool,
  ConformanceToolRun,
  RunnerConformanceSetup,
} from "./conformance-script.ts";
