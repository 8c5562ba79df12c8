/**
 * Entry module of the Worker children of the rollover crash test: runs
 * {@link rolloverCrashFlow} on the engine named by `PERDURE_ENGINE_ADDRESS`.
 */
import { runAgentWorkerProcess } from "../../testing/run-agent-worker-process.ts";
import { rolloverCrashFlow } from "./message-storage-flows.ts";

await runAgentWorkerProcess([rolloverCrashFlow]);
