import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { Client, FlowNotFoundError, InvalidInputError } from "@perdure/engine";
import { formatSqliteEngineAddress, parseEngineAddress } from "./engine-address.ts";
import { openStoreAtAddress } from "./open-store-at-address.ts";
import { PrivateEngine } from "./private-engine.ts";

void test("a sqlite address round-trips through format and parse", () => {
  const databasePath = join("/", "tmp", "perdure", "engine.db");
  assert.deepEqual(parseEngineAddress(formatSqliteEngineAddress(databasePath)), { kind: "sqlite", databasePath });
});

void test("openStoreAtAddress opens a working connection to a private engine's database", async (t) => {
  const engine = await PrivateEngine.start();
  t.after(() => engine.stop());
  const store = openStoreAtAddress(engine.address);
  t.after(() => store.close());
  assert.equal(store.kind, "sqlite");
  assert.equal(store.pollIntervalMs, 20);
  await assert.rejects(new Client({ store }).describe("missing-flow"), FlowNotFoundError);
});

for (const [address, message] of [
  ["sqlite:relative/engine.db", /engine address "sqlite:relative\/engine.db" is invalid: the SQLite path must be absolute/],
  ["postgres://localhost/perdure", /engine address "postgres:\/\/localhost\/perdure" is not supported yet/],
  ["postgresql://localhost/perdure", /engine address "postgresql:\/\/localhost\/perdure" is not supported yet/],
  ["/tmp/engine.db", /engine address "\/tmp\/engine.db" is invalid: use sqlite:<absolute path/],
  ["", /engine address "" is invalid/],
] as const) {
  void test(`openStoreAtAddress rejects ${JSON.stringify(address)} with an error naming it`, () => {
    assert.throws(() => openStoreAtAddress(address), (error: unknown) => error instanceof InvalidInputError && message.test(error.message));
  });
}
