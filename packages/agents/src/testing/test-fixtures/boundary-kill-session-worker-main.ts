/**
 * Entry module of the Worker processes of the agents' boundary-kill test:
 * stands by for its start signal (a replacement), then runs the session on
 * the engine named by PERDURE_ENGINE_ADDRESS with default Worker options but
 * one slot and a stable Worker ID, and approves its pending approvals. The
 * effect of `send_refund` comes from PERDURE_BOUNDARY_KILL_SESSION_REFUND_EFFECT.
 */
import { Client } from "@perdure/engine";
import { awaitBoundaryKillStartSignal } from "@perdure/engine/testing";
import { openStoreAtAddress } from "../open-store-at-address.ts";
import { runAgentWorkerProcess } from "../run-agent-worker-process.ts";
import { engineAddressEnvironmentVariable } from "../worker-process-protocol.ts";
import type { ToolEffect } from "../../contract/values/tool-effect.ts";
import {
  boundaryKillSessionId, boundaryKillSessionRefundEffectEnvironmentVariable, boundaryKillSessionWorkerId, createBoundaryKillSessionFlow, driveApprovals,
} from "./boundary-kill-session-flow.ts";

const refundEffect = process.env[boundaryKillSessionRefundEffectEnvironmentVariable];
const flow = createBoundaryKillSessionFlow(refundEffect === undefined || refundEffect === "" ? {} : { refundEffect: refundEffect as ToolEffect });

await awaitBoundaryKillStartSignal();
// 5 s is the Worker's default liveness timeout; the test helper would shorten it to 1.5 s. One slot:
// the three tool Steps run one after another in claim order, so the boundaries come in the same order in every run.
await runAgentWorkerProcess([flow], { workerOptions: { workerId: boundaryKillSessionWorkerId, livenessTimeoutMs: 5000, concurrency: 1 } });
void driveApprovals(new Client({ store: openStoreAtAddress(process.env[engineAddressEnvironmentVariable] ?? "") }), flow, boundaryKillSessionId);
