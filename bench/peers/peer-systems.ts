/**
 * The peers Perdure is compared with, each running the same workload as
 * `workload.ts` describes, on the bench's PostgreSQL server where it needs one.
 */
import type { SystemEntry } from "./run.ts";

export const peerSystems: readonly SystemEntry[] = [
  {
    key: "dbos",
    counted: false,
    // Loaded only when selected: DBOS registers its workflows at import.
    open: async ({ postgres }) => (await import("./dbos-system.ts")).openDbos(postgres().connectionString, { poolSize: 20 }),
  },
  {
    key: "restate",
    counted: false,
    // Loaded only when selected: it starts the server binary of @restatedev/restate-server.
    open: async () => (await import("./restate-system.ts")).openRestate(),
  },
];
