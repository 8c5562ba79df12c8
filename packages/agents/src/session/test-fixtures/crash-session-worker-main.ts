/**
 * Entry module of the Worker child processes of the agent session crash
 * tests: runs {@link crashSessionFlows} on the engine named by
 * `PERDURE_ENGINE_ADDRESS`. The fixtures find their gates and InvocationLog
 * through `PERDURE_AGENTS_CRASH_DIRECTORY`.
 */
import { runAgentWorkerProcess } from "../../testing/run-agent-worker-process.ts";
import { crashSessionFlows } from "./crash-session-flows.ts";

await runAgentWorkerProcess(crashSessionFlows);
