import type { AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { runAgentWorkerProcess } from "../run-agent-worker-process.ts";
import { runnerConformanceSetup, type RunnerConformanceSetup } from "./conformance-script.ts";

/** Names the folder of a conformance test's gates and log; the tests pass it to every Worker child. */
export const runnerConformanceDirectoryEnvironmentVariable = "PERDURE_RUNNER_CONFORMANCE_DIRECTORY";

/**
 * The body of a conformance Worker child: builds the subject's Flow for the
 * test's folder and runs it with `runAgentWorkerProcess`.
 *
 * @example
 * // my-adapter-conformance-worker.ts
 * await runRunnerConformanceWorker(myAdapterSubject);
 */
export async function runRunnerConformanceWorker(subject: { createFlow(setup: RunnerConformanceSetup): AgentSessionFlow }): Promise<void> {
  const directory = process.env[runnerConformanceDirectoryEnvironmentVariable];
  if (directory === undefined || directory === "") {
    throw new Error(`set ${runnerConformanceDirectoryEnvironmentVariable} to the conformance test's folder (runRunnerConformanceTests does)`);
  }
  await runAgentWorkerProcess([subject.createFlow(runnerConformanceSetup(directory))]);
}
