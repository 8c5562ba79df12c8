/** Entry module of the Worker child processes of the seeded turn-control race test. */
import { runAgentWorkerProcess } from "../../testing/run-agent-worker-process.ts";
import { turnControlRaceFlow } from "./turn-control-race-flow.ts";

await runAgentWorkerProcess([turnControlRaceFlow]);
