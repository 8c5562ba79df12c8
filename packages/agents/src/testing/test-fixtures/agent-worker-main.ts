/**
 * Entry module of the Worker child processes in the testing helpers' own
 * integration tests: runs {@link gatedFlow} on the engine named by
 * `PERDURE_ENGINE_ADDRESS`.
 */
import { runAgentWorkerProcess } from "../run-agent-worker-process.ts";
import { gatedFlow } from "./gated-flow.ts";

await runAgentWorkerProcess([gatedFlow]);
