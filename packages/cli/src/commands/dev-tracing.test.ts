import assert from "node:assert/strict";
import { test } from "node:test";
import { otlpTracesEndpoint, redactEndpoint, startDevTracing } from "./dev-tracing.ts";

void test("the traces endpoint is OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT plus /v1/traces, else none", () => {
  assert.equal(otlpTracesEndpoint({}), undefined);
  assert.equal(otlpTracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: " " }), undefined);
  assert.equal(otlpTracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }), "http://127.0.0.1:4318/v1/traces");
  assert.equal(otlpTracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }), "http://collector:4318/v1/traces");
  assert.equal(otlpTracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:4318/custom" }), "http://b:4318/custom");
});

void test("without an OTLP endpoint perdure dev registers no tracer provider; a malformed one fails naming the value", async () => {
  assert.equal(await startDevTracing({}), undefined);
  await assert.rejects(startDevTracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "nope" }), /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT "nope" is not a URL/);
  await assert.rejects(startDevTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }), /OTEL_EXPORTER_OTLP_ENDPOINT "not a url" is not a URL; use one such as http:\/\/127.0.0.1:4318/);
});

void test("the endpoint perdure dev prints masks a user name, a password and query values; the exporter still gets them", async () => {
  assert.equal(redactEndpoint("http://user:secret@collector:4318/v1/traces"), "http://***:***@collector:4318/v1/traces");
  assert.equal(redactEndpoint("https://collector:4318/v1/traces?api_key=secret&x=1&x=2"), "https://collector:4318/v1/traces?api_key=***&x=***");
  assert.equal(redactEndpoint("http://127.0.0.1:4318/v1/traces"), "http://127.0.0.1:4318/v1/traces");
  const tracing = await startDevTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://user:secret@127.0.0.1:9/" });
  assert.ok(tracing !== undefined);
  assert.equal(tracing.endpoint, "http://***:***@127.0.0.1:9/v1/traces");
  await tracing.shutdown();
  await assert.rejects(startDevTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://user:secret@bad host" }), (error: Error) => !error.message.includes("secret") && /"http:\/\/\*\*\*@bad host" is not a URL/.test(error.message));
});
