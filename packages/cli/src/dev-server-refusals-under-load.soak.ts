/**
 * A hundred clients at once, each sending requests `perdure dev` refuses
 * (an upload over the body limit, a foreign origin, an unknown session) and
 * then another on the same pooled connections, as `fetch` does: every one
 * must read its 4xx and the reason. A refusal with an unread body closes
 * its connection; closing it with unread bytes used to reset it, so the
 * client lost the answer (ECONNRESET, EPIPE) or its next request on that
 * connection ("other side closed"), and idle connections the server closed
 * while a busy client reused them failed the same way. A close 5 s after a
 * refusal also reset uploads whose clients, on a loaded machine, had not sent
 * their whole body yet (EPIPE); the server now closes only once the client
 * closed its side, after 4 MiB beyond the limit, or after 30 s. The timing
 * this test once depended on is pinned without load by
 * server/close-refused-upload.test.ts. Under `npm run test:soak`, not
 * `npm test`: a clean-clone CI run still lost 32 of 300 upload refusals to
 * EPIPE after that fix. The server now reads a refused body of up to 4 MiB
 * to its end before it answers, so the client has sent it all by then; the
 * losses were never reproduced here, so this test stays a soak.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { findFreeLoopbackPorts } from "@perdure/agents/testing";
import { DevServerProcess } from "./test-fixtures/dev-server-process.ts";

const clients = 100;
const rounds = 3;

interface Refusal {
  name: string;
  init: RequestInit;
  status: number;
  reason: RegExp;
}

function refusals(index: number): Refusal[] {
  const json = { "content-type": "application/json" };
  const chat = (sessionId: string, text: string) => JSON.stringify({ id: sessionId, messages: [{ id: "m1", role: "user", parts: [{ type: "text", text }] }] });
  return [
    { name: "an upload over the limit", init: { method: "POST", headers: json, body: chat("anyone", "x".repeat(2 * 1024 * 1024)) }, status: 413, reason: /request body is over 1048576 bytes/ },
    { name: "a foreign origin", init: { method: "POST", headers: { ...json, origin: "http://evil.example" }, body: chat("anyone", "hi") }, status: 403, reason: /origin "http:\/\/evil.example"/ },
    { name: "an unknown session", init: { method: "POST", headers: json, body: chat(`missing-${index}`, "hi") }, status: 404, reason: new RegExp(`session missing-${index} not found`) },
  ];
}

it("a hundred concurrent clients read every refusal's status and reason, and their next requests on the same connections too", { timeout: 300_000 }, async (t) => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-dev-refusals-"));
  const gateDirectory = join(folder, "gates");
  mkdirSync(gateDirectory);
  const [port] = await findFreeLoopbackPorts(1);
  assert.ok(port !== undefined);
  const server = await DevServerProcess.start({ port, databasePath: join(folder, "dev.db"), gateDirectory });
  t.after(async () => {
    await server.stop();
    rmSync(folder, { recursive: true, force: true });
  });
  const failures: string[] = [];
  let answered = 0;
  await Promise.all(Array.from({ length: clients }, async (_unused, index) => {
    for (let round = 0; round < rounds; round += 1) {
      const refusal = refusals(index)[(index + round) % 3]!;
      try {
        const response = await fetch(`${server.origin}/api/chat`, refusal.init);
        const body = await response.text();
        const reason = (JSON.parse(body) as { error?: unknown }).error;
        if (response.status !== refusal.status || typeof reason !== "string" || !refusal.reason.test(reason)) failures.push(`${refusal.name}: ${response.status} ${body.slice(0, 200)}`);
        else answered += 1;
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        failures.push(`${refusal.name}: ${String(error)} (${cause?.code ?? ""} ${cause?.message ?? ""})`);
      }
    }
  }));
  assert.deepEqual(failures, [], `${failures.length} of ${clients * rounds} refusals were not read`);
  assert.equal(answered, clients * rounds);
});
