import { runStoreConformanceSuite } from "../testing/conformance/run-store-conformance-suite.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";

runStoreConformanceSuite({
  name: "sqlite",
  openStore: async () => {
    const temporary = createTemporarySqliteStore();
    return { store: temporary.store, reopen: async () => temporary.reopen(), dispose: () => temporary.dispose() };
  },
});
