/** Entry module of the Worker children of the cross-process tracing test. */
import { runAgentWorkerProcess } from "../../testing/run-agent-worker-process.ts";
import { crossProcessTracingFlow } from "./cross-process-tracing-flow.ts";

await runAgentWorkerProcess([crossProcessTracingFlow]);
