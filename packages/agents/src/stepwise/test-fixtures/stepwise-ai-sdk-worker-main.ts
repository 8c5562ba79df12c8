/**
 * Entry module of the Worker child processes of the Stepwise AI SDK crash
 * tests: runs {@link stepwiseCrashFlows} on the engine named by
 * `PERDURE_ENGINE_ADDRESS`. The fixtures find their gates and InvocationLog
 * through `PERDURE_STEPWISE_CRASH_DIRECTORY`.
 */
import { runAgentWorkerProcess } from "../../testing/run-agent-worker-process.ts";
import { stepwiseCrashFlows } from "./stepwise-ai-sdk-crash-flows.ts";

await runAgentWorkerProcess(stepwiseCrashFlows);
