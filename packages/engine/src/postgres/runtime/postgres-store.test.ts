import { test } from "node:test";
import { runStoreConformanceSuite } from "../../testing/conformance/run-store-conformance-suite.ts";
import { createTemporaryPostgresSchema, missingDatabaseMessage, testDatabaseUrl } from "../temporary-postgres-schema.ts";

const url = testDatabaseUrl();

if (url === undefined) {
  // CI must never pass without running these; a developer without a server gets a skip with the reason.
  if (process.env["CI"] !== undefined && process.env["CI"] !== "") {
    test("Store conformance: postgres", () => {
      throw new Error(`the PostgreSQL store tests cannot run in CI: ${missingDatabaseMessage}`);
    });
  } else {
    test("Store conformance: postgres", { skip: missingDatabaseMessage }, () => undefined);
  }
} else {
  runStoreConformanceSuite({
    name: "postgres",
    openStore: async () => {
      const temporary = createTemporaryPostgresSchema(url);
      const store = await temporary.open();
      return { store, reopen: () => temporary.open(), dispose: () => temporary.dispose() };
    },
  });
}
