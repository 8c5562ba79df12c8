import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidInputError } from "../../errors/invalid-input-error.ts";
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

test("singleAttemptClaimCommit defaults to on, takes the levels that wait for standbys or inherit, and refuses anything else by name", () => {
  const connectionString = "postgres://user@db1:5432/app";
  assert.equal(resolvePostgresStoreOptions({ connectionString }).singleAttemptClaimCommit, "on");
  for (const level of ["remote_write", "on", "remote_apply", "inherit"] as const) {
    assert.equal(resolvePostgresStoreOptions({ connectionString, singleAttemptClaimCommit: level }).singleAttemptClaimCommit, level);
  }
  for (const level of ["local", "off", "ON", ""]) {
    assert.throws(() => resolvePostgresStoreOptions({ connectionString, singleAttemptClaimCommit: level as never }), (error: unknown) => {
      assert.ok(InvalidInputError.isInstance(error));
      assert.ok(error.message.includes(`singleAttemptClaimCommit ${JSON.stringify(level)} is invalid`), error.message);
      return true;
    });
  }
});
