/**
 * Entry module of the Worker child processes of the built-in tools' crash
 * tests: runs {@link builtInsCrashFlows} on the engine named by
 * `PERDURE_ENGINE_ADDRESS`.
 */
import { runAgentWorkerProcess } from "../../testing/run-agent-worker-process.ts";
import { builtInsCrashFlows } from "./stepwise-built-ins-crash-flows.ts";

await runAgentWorkerProcess(builtInsCrashFlows);
