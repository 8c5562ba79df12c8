/** Entry module of the Worker processes of the scheduled-turn outage test: {@link scheduledTurnFlow} on `PERDURE_ENGINE_ADDRESS`. */
import { runAgentWorkerProcess } from "../../../testing/run-agent-worker-process.ts";
import { scheduledTurnFlow } from "./scheduled-turn-flows.ts";

await runAgentWorkerProcess([scheduledTurnFlow]);
