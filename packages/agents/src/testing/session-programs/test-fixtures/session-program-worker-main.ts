/**
 * Entry module of the Worker processes of the session-program tests: builds
 * the program of PERDURE_SESSION_PROGRAM_WORKER_SEED, stands by for its start
 * signal (a replacement), runs its session Flow on the engine named by
 * PERDURE_ENGINE_ADDRESS with default Worker options and a stable Worker ID,
 * and answers the program's approvals. Tool runs go to the InvocationLog at
 * PERDURE_SESSION_PROGRAM_TOOL_LOG.
 */
import { Client } from "@perdure/engine";
import { awaitBoundaryKillStartSignal } from "@perdure/engine/testing";
import { openStoreAtAddress } from "../../open-store-at-address.ts";
import { runAgentWorkerProcess } from "../../run-agent-worker-process.ts";
import { engineAddressEnvironmentVariable } from "../../worker-process-protocol.ts";
import { driveProgramApprovals } from "../drive-program-approvals.ts";
import { generateSessionProgram } from "../generate-session-program.ts";
import { createSessionProgramFlow, sessionProgramFlowId } from "../session-program-flow.ts";
import { sessionProgramSeedEnvironmentVariable, sessionProgramToolLogEnvironmentVariable, sessionProgramWorkerId } from "../session-program-process.ts";

const seedText = process.env[sessionProgramSeedEnvironmentVariable] ?? "";
const toolLogPath = process.env[sessionProgramToolLogEnvironmentVariable] ?? "";
if (seedText === "" || toolLogPath === "") throw new Error(`set ${sessionProgramSeedEnvironmentVariable} and ${sessionProgramToolLogEnvironmentVariable}`);
const program = generateSessionProgram(Number(seedText));
const flow = createSessionProgramFlow(program, toolLogPath);

await awaitBoundaryKillStartSignal();
// 5 s is the Worker's default liveness timeout; the test helper would shorten it to 1.5 s.
await runAgentWorkerProcess([flow], { workerOptions: { workerId: sessionProgramWorkerId, livenessTimeoutMs: 5000 } });
void driveProgramApprovals(new Client({ store: openStoreAtAddress(process.env[engineAddressEnvironmentVariable] ?? "") }), flow, sessionProgramFlowId, program);
