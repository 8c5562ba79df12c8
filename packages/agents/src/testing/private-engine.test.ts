import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import { test } from "node:test";
import { Client, FlowNotFoundError, StoreClosedError } from "@perdure/engine";
import { PrivateEngine } from "./private-engine.ts";

void test("a private engine has its own database file in a fresh folder, addressed as sqlite:<absolute path>", async (t) => {
  const first = await PrivateEngine.start();
  t.after(() => first.stop());
  const second = await PrivateEngine.start();
  t.after(() => second.stop());
  assert.ok(isAbsolute(first.databasePath));
  assert.equal(first.address, `sqlite:${first.databasePath}`);
  assert.equal(dirname(first.databasePath), first.directory);
  assert.ok(existsSync(first.databasePath), "start creates the database");
  assert.notEqual(first.directory, second.directory);
});

void test("stop closes every store the engine opened and removes its folder", async () => {
  const engine = await PrivateEngine.start();
  const stores = [engine.openStore(), engine.openStore()];
  for (const store of stores) await assert.rejects(new Client({ store }).describe("none"), FlowNotFoundError);
  await engine.stop();
  assert.equal(existsSync(engine.directory), false);
  for (const store of stores) await assert.rejects(new Client({ store }).describe("none"), StoreClosedError);
  await engine.stop();
  assert.throws(() => engine.openStore(), /is stopped/);
});
