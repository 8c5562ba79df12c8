import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { test } from "node:test";
import { InvalidInputError } from "@perdure/engine";
import { findFreeLoopbackPorts } from "./find-free-loopback-ports.ts";

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host: "127.0.0.1", port, exclusive: true }, () => resolve(server));
  });
}

void test("returns distinct ports that can all be bound on 127.0.0.1 at once", async (t) => {
  const ports = await findFreeLoopbackPorts(5);
  assert.equal(ports.length, 5);
  assert.equal(new Set(ports).size, 5, `ports must be distinct: ${ports.join(", ")}`);
  for (const port of ports) assert.ok(Number.isInteger(port) && port > 0 && port < 65_536);
  const servers = await Promise.all(ports.map(listen));
  t.after(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));
});

void test("rejects a count that is not a positive integer", async () => {
  for (const count of [0, -1, 1.5, Number.NaN]) {
    await assert.rejects(findFreeLoopbackPorts(count), InvalidInputError, String(count));
  }
});
