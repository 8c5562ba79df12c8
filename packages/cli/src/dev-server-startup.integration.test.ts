/**
 * What `perdure dev` says and does when it starts: the model each agent
 * uses, and a clean refusal of a busy port.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { findFreeLoopbackPorts } from "@perdure/agents/testing";
import { DevServerProcess } from "./test-fixtures/dev-server-process.ts";

async function startServer(t: TestContext): Promise<{ server: DevServerProcess; folder: string }> {
  const folder = mkdtempSync(join(tmpdir(), "perdure-dev-startup-"));
  mkdirSync(join(folder, "gates"));
  const [port] = await findFreeLoopbackPorts(1);
  assert.ok(port !== undefined);
  const server = await DevServerProcess.start({ port, databasePath: join(folder, "dev.db"), gateDirectory: join(folder, "gates") });
  t.after(async () => {
    await server.stop();
    rmSync(folder, { recursive: true, force: true });
  });
  return { server, folder };
}

describe("perdure dev's start banner", () => {
  it("names the model each agent uses", { timeout: 300_000 }, async (t) => {
    const { server } = await startServer(t);
    assert.match(server.log, /^perdure dev: SupportAgent uses the gated scripted model \(perdure-test\)$/m);
  });
});

describe("a second perdure dev on a busy port", () => {
  it("exits 1 naming the port and --port, with no Worker started", { timeout: 300_000 }, async (t) => {
    const { server, folder } = await startServer(t);
    const port = Number(new URL(server.origin).port);
    const second = DevServerProcess.start({ port, databasePath: join(folder, "second.db"), gateDirectory: join(folder, "gates") });
    await assert.rejects(second, (error: Error) => {
      assert.match(error.message, new RegExp(`exited with code 1 before printing its URL:[\\s\\S]*port ${port} on 127\\.0\\.0\\.1 is in use[\\s\\S]*--port`));
      return true;
    });
    assert.throws(() => statSync(join(folder, "second.db")), /ENOENT/, "the second server opened a store");
  });
});
