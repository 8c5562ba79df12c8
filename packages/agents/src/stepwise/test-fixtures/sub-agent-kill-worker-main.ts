/**
 * Entry module of the Worker processes of the sub-agent boundary-kill test:
 * stands by for its start signal (a replacement), then runs the writer and
 * researcher sessions on the engine named by PERDURE_ENGINE_ADDRESS with a
 * stable Worker ID.
 */
import { Client } from "@perdure/engine";
import { awaitBoundaryKillStartSignal } from "@perdure/engine/testing";
import { openStoreAtAddress } from "../../testing/open-store-at-address.ts";
import { runAgentWorkerProcess } from "../../testing/run-agent-worker-process.ts";
import { engineAddressEnvironmentVariable } from "../../testing/worker-process-protocol.ts";
import { createSubAgentKillFlows, subAgentKillWorkerId } from "./sub-agent-kill-flows.ts";

const flows = createSubAgentKillFlows(new Client({ store: openStoreAtAddress(process.env[engineAddressEnvironmentVariable] ?? "") }));
await awaitBoundaryKillStartSignal();
await runAgentWorkerProcess(flows, { workerOptions: { workerId: subAgentKillWorkerId, livenessTimeoutMs: 5000 } });
