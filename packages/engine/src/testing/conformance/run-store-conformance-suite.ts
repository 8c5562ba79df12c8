import { describe } from "node:test";
import { attemptTests } from "./attempts.ts";
import { clientTests } from "./client-operations.ts";
import { conditionTests } from "./conditions.ts";
import { flowAndStepTests } from "./flows-and-steps.ts";
import type { StoreConformanceOptions } from "./harness.ts";
import { lostClaimTests } from "./lost-claims.ts";
import { stateAndRpcTests } from "./state-and-rpcs.ts";
import { timerAndStreamTests } from "./timers-and-streams.ts";
import { workerCloseTests } from "./worker-close.ts";

/**
 * Registers the Store conformance suite with `node:test`. A store is done
 * when every test here passes against it.
 *
 * @example
 * runStoreConformanceSuite({ name: "sqlite", openStore: async () => openTemporarySqlite() });
 */
export function runStoreConformanceSuite(options: StoreConformanceOptions): void {
  describe(`Store conformance: ${options.name}`, () => {
    describe("Flows, Steps and decisions", () => flowAndStepTests(options));
    describe("conditions", () => conditionTests(options));
    describe("state and RPCs", () => stateAndRpcTests(options));
    describe("attempts, retries and fencing", () => attemptTests(options));
    describe("claims whose reply was lost", () => lostClaimTests(options));
    describe("Timers and Streams", () => timerAndStreamTests(options));
    describe("Client", () => clientTests(options));
    describe("closing Workers: drain and release", () => workerCloseTests(options));
  });
}
