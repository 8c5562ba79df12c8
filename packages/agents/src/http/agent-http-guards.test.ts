/**
 * What the handler refuses before a route runs: bodies over their limit
 * (read no further than the limit), foreign hosts, other origins without
 * CORS, callers `authorize` refuses, and options that would serve everyone.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Client } from "@perdure/engine";
import { createTemporarySqliteStore } from "@perdure/engine/testing";
import { createAgentHttpHandler } from "./create-agent-http-handler.ts";
import { authorizeByToken, createSupportFlow, origin, startHttpHarness, tokens } from "./test-fixtures/http-harness.ts";

/** A body of `totalBytes` in 64 KiB chunks that counts how much of it was pulled. */
function countedBody(totalBytes: number): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  return {
    body: new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= totalBytes) {
          controller.close();
          return;
        }
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }, { highWaterMark: 0 }),
    pulled: () => pulled,
  };
}

describe("the session HTTP API bounds what it reads", () => {
  for (const isLengthDeclared of [false, true]) {
    it(`a 64 MiB ${isLengthDeclared ? "declared" : "chunked"} body is refused with a 413 after reading at most the limit`, async (t) => {
      const harness = await startHttpHarness("plain");
      t.after(() => harness.close());
      const total = 64 * 1024 * 1024;
      for (const [path, limit] of [["/api/sessions", 64 * 1024], ["/api/chat", 1024 * 1024]] as const) {
        const counted = countedBody(total);
        const request = new Request(`${origin}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${tokens.alice}`, ...(isLengthDeclared ? { "content-length": String(total) } : {}) },
          body: counted.body,
          duplex: "half",
        } as RequestInit);
        const response = await harness.handler(request);
        assert.equal(response.status, 413);
        assert.deepEqual(await response.json(), { error: `request body is over ${limit} bytes` });
        assert.ok(counted.pulled() <= limit + 2 * 64 * 1024, `${path} pulled ${counted.pulled()} bytes for a limit of ${limit}`);
        if (isLengthDeclared) assert.equal(counted.pulled(), 0, "a declared length over the limit is refused before reading");
      }
      assert.deepEqual(await harness.client.listFlows(), [], "nothing was started");
    });
  }

  it("a caller that authorize refuses is answered before its body is read", async (t) => {
    const harness = await startHttpHarness("plain");
    t.after(() => harness.close());
    const counted = countedBody(8 * 1024 * 1024);
    const response = await harness.handler(new Request(`${origin}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: counted.body, duplex: "half" } as RequestInit));
    assert.equal(response.status, 401);
    assert.ok(counted.pulled() <= 64 * 1024, `pulled ${counted.pulled()} bytes for a refused caller`);
  });

  it("limits are options, checked when the handler is made", async (t) => {
    const harness = await startHttpHarness("plain", { limits: { maxBodyBytes: 10 } });
    t.after(() => harness.close());
    const response = await harness.call("POST", "/api/sessions", { user: "alice", body: { sessionId: "too-long-for-ten" } });
    assert.deepEqual([response.status, await response.json()], [413, { error: "request body is over 10 bytes" }]);
    assert.throws(() => createAgentHttpHandler({ client: harness.client, flows: [harness.flow], authorize: authorizeByToken, limits: { maxChatBodyBytes: -1 } }), /limits.maxChatBodyBytes -1 is invalid/);
  });
});

describe("the session HTTP API refuses to serve everyone by accident", () => {
  const temporary = createTemporarySqliteStore();
  const client = new Client({ store: temporary.store });
  const flow = createSupportFlow();

  it("needs authorize, and anyone-on-loopback only with loopback hosts", async () => {
    // @ts-expect-error authorize is required
    assert.throws(() => createAgentHttpHandler({ client, flows: [flow] }), /authorize undefined is invalid: pass a function/);
    assert.throws(() => createAgentHttpHandler({ client, flows: [flow], authorize: "anyone-on-loopback" }), /needs allowedHosts naming loopback hosts only/);
    assert.throws(() => createAgentHttpHandler({ client, flows: [flow], authorize: "anyone-on-loopback", allowedHosts: "any" }), /needs allowedHosts naming loopback hosts only.* got "any"/);
    assert.throws(() => createAgentHttpHandler({ client, flows: [flow], authorize: "anyone-on-loopback", allowedHosts: ["localhost:4100", "app.example.com"] }), /got \["localhost:4100","app.example.com"\]/);
    assert.throws(() => createAgentHttpHandler({ client, flows: [flow, flow], authorize: authorizeByToken }), /two agents have the Flow type "HttpSupportAgent"/);
    assert.throws(() => createAgentHttpHandler({ client, flows: [flow], authorize: authorizeByToken, basePath: "api/" }), /basePath "api\/" is invalid/);
    const loopback = createAgentHttpHandler({ client, flows: [flow], authorize: "anyone-on-loopback", allowedHosts: ["127.0.0.1:4100", "localhost:4100"] });
    const rebound = await loopback(new Request("http://evil.example:4100/agents", { headers: { host: "evil.example:4100" } }));
    assert.deepEqual([rebound.status, await rebound.json()], [421, { error: 'host "evil.example:4100" is not served here: use 127.0.0.1:4100 or localhost:4100' }]);
    const local = await loopback(new Request("http://localhost:4100/agents"));
    assert.equal(local.status, 200);
    await temporary.dispose();
  });

  it("a front end named in allowedOrigins gets CORS headers; another origin gets none", async (t) => {
    const frontEnd = "http://localhost:5173";
    const harness = await startHttpHarness("plain", { allowedOrigins: [frontEnd] });
    t.after(() => harness.close());
    const preflight = await harness.call("OPTIONS", "/api/sessions", { headers: { origin: frontEnd, "access-control-request-method": "POST" } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get("access-control-allow-origin"), frontEnd);
    assert.equal(preflight.headers.get("access-control-allow-credentials"), "true");
    const created = await harness.call("POST", "/api/sessions", { user: "alice", body: {}, headers: { origin: frontEnd } });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get("access-control-allow-origin"), frontEnd);
    const refused = await harness.call("GET", "/api/sessions", { headers: { origin: frontEnd } });
    assert.equal(refused.status, 401, "a refusal from authorize also carries CORS headers, so the front end can read it");
    assert.equal(refused.headers.get("access-control-allow-origin"), frontEnd);
    const other = await harness.call("OPTIONS", "/api/sessions", { headers: { origin: "http://localhost:5174", "access-control-request-method": "POST" } });
    assert.equal(other.headers.get("access-control-allow-origin"), null);
  });
});
