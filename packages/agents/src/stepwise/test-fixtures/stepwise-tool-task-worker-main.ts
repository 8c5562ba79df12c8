/**
 * Entry module of the Worker child processes of the tool task crash tests:
 * runs {@link toolTaskCrashFlows} on the engine named by `PERDURE_ENGINE_ADDRESS`.
 */
import { runAgentWorkerProcess } from "../../testing/run-agent-worker-process.ts";
import { toolTaskCrashFlows } from "./stepwise-tool-task-crash-flows.ts";

await runAgentWorkerProcess(toolTaskCrashFlows);
