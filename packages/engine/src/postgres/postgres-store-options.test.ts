import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import { PostgresStore } from "./postgres-store.ts";
import { resolvePostgresStoreOptions } from "./postgres-store-options.ts";

test("a connection string with several hosts is refused with the supported ways, before any connection", async () => {
  for (const connectionString of ["postgres://user:secret@db1:5432,db2:5432/app", "postgresql://db1,db2/app?target_session_attrs=read-write"]) {
    const check = (error: unknown): boolean => {
      assert.ok(InvalidInputError.isInstance(error));
      assert.match(error.message, /names several hosts \(.*db1.*,db2.*\); the driver connects to one: put a TCP proxy or a virtual IP/);
      assert.doesNotMatch(error.message, /secret/);
      return true;
    };
    assert.throws(() => resolvePostgresStoreOptions({ connectionString }), check);
    await assert.rejects(PostgresStore.open({ connectionString }), check);
  }
  assert.equal(resolvePostgresStoreOptions({ connectionString: "postgres://user:secret@db1:5432/app" }).schema, "perdure");
});
