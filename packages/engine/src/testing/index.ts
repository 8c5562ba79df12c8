/**
 * `@perdure/engine/testing`: the store conformance suite and test helpers.
 *
 * @example
 * import { runStoreConformanceSuite } from "@perdure/engine/testing";
 * runStoreConformanceSuite({ name: "my store", openStore: async () => MyStore.open() });
 */
export { createTemporarySqliteStore } from "./temporary-sqlite-store.ts";
export type { TemporarySqliteStore } from "./temporary-sqlite-store.ts";
export { FaultInjectingStore } from "./fault-injecting-store.ts";
export type { FaultInjectingStoreOptions } from "./fault-injecting-store.ts";
export { injectedFaultOf, storeFaultKinds } from "./store-fault.ts";
export type { StoreCall, StoreFaultKind, StoreFaultPoint } from "./store-fault.ts";
export { pollUntil } from "./poll-until.ts";
export type { PollUntilOptions } from "./poll-until.ts";
export { runWorkerProcess, runWorkerProcessOnStore, startWorkerProcess, workerReadyLine } from "./worker-process.ts";
export type { RunWorkerProcessOptions, StartWorkerProcessOptions, WorkerProcess } from "./worker-process.ts";
export { runStoreConformanceSuite } from "./conformance/run-store-conformance-suite.ts";
export type { OpenedStore, StoreConformanceOptions } from "./conformance/harness.ts";
