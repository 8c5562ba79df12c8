/**
 * Entry module of the Worker child processes of the UI stream crash test:
 * runs {@link uiStreamCrashFlow} on the engine named by `PERDURE_ENGINE_ADDRESS`.
 */
import { runAgentWorkerProcess } from "../../testing/run-agent-worker-process.ts";
import { uiStreamCrashFlow } from "./ui-stream-crash-flow.ts";

await runAgentWorkerProcess([uiStreamCrashFlow]);
