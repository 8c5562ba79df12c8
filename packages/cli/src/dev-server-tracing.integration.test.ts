/**
 * `perdure dev` with `OTEL_EXPORTER_OTLP_ENDPOINT` set exports the sessions'
 * spans over OTLP/HTTP: a real server process, a loopback OTLP receiver in
 * the test, and one turn with a tool call.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { findFreeLoopbackPorts } from "@perdure/agents/testing";
import { DevServerProcess } from "./test-fixtures/dev-server-process.ts";

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
}

interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: OtlpAttribute[];
}

interface OtlpExportRequest {
  resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[];
}

interface ReceivedExport {
  path: string;
  contentType: string | undefined;
  body: OtlpExportRequest;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolveBody, reject) => {
    let text = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => { text += chunk; });
    request.on("end", () => resolveBody(text));
    request.on("error", reject);
  });
}

interface OtlpReceiver {
  server: Server;
  endpoint: string;
  /** The `authorization` header value an export must carry. */
  authorization: string;
  received: ReceivedExport[];
  /** Requests refused for a missing or wrong `authorization` header. */
  refused: number;
}

/**
 * An OTLP/HTTP receiver on a loopback port that keeps every export request
 * carrying its bearer token and answers 401 to any other caller.
 */
async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const authorization = `Bearer ${randomBytes(24).toString("base64url")}`;
  const receiver: OtlpReceiver = {
    server: createServer((request, response) => {
      if (request.headers.authorization !== authorization) {
        receiver.refused += 1;
        request.resume();
        response.writeHead(401, { "content-type": "application/json" });
        response.end("{}");
        return;
      }
      void readBody(request).then((text) => {
        receiver.received.push({ path: request.url ?? "", contentType: request.headers["content-type"], body: JSON.parse(text) as OtlpExportRequest });
        response.writeHead(200, { "content-type": "application/json" });
        response.end("{}");
      });
    }),
    endpoint: "",
    authorization,
    received: [],
    refused: 0,
  };
  await new Promise<void>((resolveListen) => receiver.server.listen(0, "127.0.0.1", resolveListen));
  receiver.endpoint = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
  return receiver;
}

function attributeOf(attributes: readonly OtlpAttribute[], key: string): string | number | boolean | undefined {
  const value = attributes.find((attribute) => attribute.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue)) ?? value?.boolValue;
}

it("perdure dev with OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_HEADERS sends a turn's invoke_agent, chat and execute_tool spans to the OTLP receiver", { timeout: 300_000 }, async (t) => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-dev-tracing-"));
  mkdirSync(join(folder, "gates"));
  const receiver = await startOtlpReceiver();
  const [port] = await findFreeLoopbackPorts(1);
  assert.ok(port !== undefined);
  const server = await DevServerProcess.start({
    port,
    databasePath: join(folder, "dev.db"),
    gateDirectory: join(folder, "gates"),
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=${encodeURIComponent(receiver.authorization)}`,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "",
      OTEL_SERVICE_NAME: "",
    },
  });
  t.after(async () => {
    await server.kill();
    await new Promise((resolveClose) => receiver.server.close(resolveClose));
    rmSync(folder, { recursive: true, force: true });
  });
  assert.match(server.log, new RegExp(`^perdure dev: exporting spans over OTLP/HTTP to ${receiver.endpoint}/v1/traces$`, "m"));

  const json = { "content-type": "application/json" };
  const created = await fetch(`${server.origin}/api/sessions`, { method: "POST", headers: json, body: JSON.stringify({ sessionId: "traced-1" }) });
  assert.equal(created.status, 201, await created.clone().text());
  const chat = await fetch(`${server.origin}/api/chat`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ id: "traced-1", messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "Where is order 1003?" }] }] }),
  });
  assert.equal(chat.status, 200);
  const stream = await chat.text();
  assert.match(stream, /"type":"finish"/);
  // SIGTERM closes the server, which flushes the batch of spans before the process exits.
  await server.stop();

  const spans = receiver.received.flatMap((request) => request.body.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans.map((span) => ({
    ...span, scope: scope.scope.name, serviceName: attributeOf(resource.resource.attributes, "service.name"),
  })))));
  // The exporter sent the standard OTEL_EXPORTER_OTLP_HEADERS, so the receiver refused nothing.
  assert.equal(receiver.refused, 0);
  assert.ok(receiver.received.length > 0);
  assert.ok(receiver.received.every((request) => request.path === "/v1/traces" && request.contentType === "application/json"));
  const names = spans.map((span) => span.name);
  const root = spans.find((span) => span.name === "invoke_agent SupportAgent");
  const tool = spans.find((span) => span.name === "execute_tool lookup_order");
  const chats = spans.filter((span) => span.name.startsWith("chat"));
  assert.ok(root !== undefined && tool !== undefined, JSON.stringify(names));
  assert.equal(chats.length, 2, JSON.stringify(names));
  for (const span of [tool, ...chats]) {
    assert.equal(span.traceId, root.traceId, span.name);
    assert.equal(span.parentSpanId, root.spanId, span.name);
  }
  for (const span of spans) {
    assert.equal(span.serviceName, "perdure-dev");
    assert.equal(span.scope, "@perdure/agents");
    assert.equal(attributeOf(span.attributes, "gen_ai.conversation.id"), "traced-1");
  }
  assert.equal(attributeOf(tool.attributes, "gen_ai.tool.name"), "lookup_order");
});
