/**
 * Entry module of the Worker child processes of the `CompactContext` crash
 * test: runs {@link compactionCrashFlows} on the engine named by `PERDURE_ENGINE_ADDRESS`.
 */
import { runAgentWorkerProcess } from "../../testing/run-agent-worker-process.ts";
import { compactionCrashFlows } from "./compaction-crash-flows.ts";

await runAgentWorkerProcess(compactionCrashFlows);
