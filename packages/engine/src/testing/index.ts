/**
 * `@perdure/engine/testing`: the store conformance suite, the boundary-kill
 * loop, and test helpers.
 *
 * @example
 * import { runStoreConformanceSuite } from "@perdure/engine/testing";
 * runStoreConformanceSuite({ name: "my store", openStore: async () => MyStore.open() });
 */
export { createTemporarySqliteStore } from "./temporary-sqlite-store.ts";
export type { TemporarySqliteStore } from "./temporary-sqlite-store.ts";
export { createTemporaryPostgresSchema, missingDatabaseMessage, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "../postgres/temporary-postgres-schema.ts";
export type { TemporaryPostgresSchema } from "../postgres/temporary-postgres-schema.ts";
export { FaultInjectingStore } from "./fault-injecting-store.ts";
export type { FaultInjectingStoreOptions } from "./fault-injecting-store.ts";
export { injectedFaultOf, storeFaultKinds } from "./store-fault.ts";
export type { StoreCall, StoreFaultKind, StoreFaultPoint } from "./store-fault.ts";
export { assertSqliteStoreUnchanged, snapshotSqliteStore } from "./sqlite-store-snapshot.ts";
export type { SqliteStoreSnapshot } from "./sqlite-store-snapshot.ts";
export { pollUntil } from "./poll-until.ts";
export { CuttableTcpProxy } from "./cuttable-tcp-proxy.ts";
export type { ProxyTarget } from "./cuttable-tcp-proxy.ts";
export type { PollUntilOptions } from "./poll-until.ts";
export { runWorkerProcess, runWorkerProcessOnStore, startWorkerProcess, workerReadyLine } from "./worker-process.ts";
export type { RunWorkerProcessOptions, StartWorkerProcessOptions, WorkerProcess } from "./worker-process.ts";
export { runBoundaryKillLoop } from "./boundary-kill-loop.ts";
export type { BoundaryKillLoopOptions } from "./boundary-kill-options.ts";
export { boundaryKillAllEnvironmentVariable, boundaryKillSample, boundaryKillSeedEnvironmentVariable } from "./boundary-kill-sample.ts";
export type { BoundaryKillSample } from "./boundary-kill-sample.ts";
export type {
  BoundaryKillHistoryEntry, BoundaryKillProcess, BoundaryKillProcessStart, BoundaryKillRunInfo, BoundaryKillRunResult, BoundaryKillScenario,
} from "./boundary-kill-scenario.ts";
export { formatBoundaryKillReport } from "./boundary-kill-report.ts";
export type { BoundaryKillCoverage, BoundaryKillPoint, BoundaryKillReport, BoundaryKillRunReport, BoundaryKillViolation } from "./boundary-kill-report.ts";
export { awaitBoundaryKillStartSignal, boundaryKillStartSignalEnvironmentVariable } from "./boundary-kill-start-signal.ts";
export { findLostAcknowledgedCommits } from "./boundary-kill-acknowledged-commits.ts";
export { readBoundaryTrace } from "./boundary-trace.ts";
export { runStoreConformanceSuite } from "./conformance/run-store-conformance-suite.ts";
export type { OpenedStore, StoreConformanceOptions } from "./conformance/harness.ts";
