import assert from "node:assert/strict";
import { test } from "node:test";
import { redactSecrets, redactSecretsInText } from "./redact-secrets.ts";

test("database URL passwords, authorization headers, cookies and password settings are removed from log text", () => {
  assert.equal(redactSecretsInText("connect to postgres://perdure:s3cret-pw@db.internal:5432/app failed"), "connect to postgres://perdure:[redacted]@db.internal:5432/app failed");
  assert.equal(redactSecretsInText("Authorization: Bearer abc.def-ghi"), "Authorization: [redacted]");
  assert.equal(redactSecretsInText("sent bearer abc.def to the API"), "sent bearer [redacted] to the API");
  assert.equal(redactSecretsInText("cookie=session=xyz; theme=dark"), "cookie=[redacted]");
  assert.equal(redactSecretsInText("host=db user=perdure password=hunter2 dbname=app"), "host=db user=perdure password=[redacted] dbname=app");
  assert.equal(redactSecretsInText("no secret in postgres://db.internal/app"), "no secret in postgres://db.internal/app");
});

test("secret fields and errors are redacted deeply, and the input is not changed", () => {
  const error = new Error("password authentication failed for postgres://u:pw1@h/db", { cause: new Error("Authorization: Bearer tok") });
  const fields = { headers: { Authorization: "Bearer tok", cookie: "a=b", accept: "text/html" }, databaseUrl: "postgres://u:pw@h/db", err: error, nested: [{ password: "x" }] };
  const redacted = redactSecrets(fields) as { headers: Record<string, string>; databaseUrl: string; err: { type: string; message: string; stack: string; cause: { message: string } }; nested: Array<{ password: string }> };
  assert.deepEqual(redacted.headers, { Authorization: "[redacted]", cookie: "[redacted]", accept: "text/html" });
  assert.equal(redacted.databaseUrl, "[redacted]");
  assert.equal(redacted.err.type, "Error");
  assert.equal(redacted.err.message, "password authentication failed for postgres://u:[redacted]@h/db");
  assert.ok(!redacted.err.stack.includes("pw1"), "the stack's first line carries the message too");
  assert.equal(redacted.err.cause.message, "Authorization: [redacted]");
  assert.equal(redacted.nested[0]?.password, "[redacted]");
  assert.equal(fields.headers.Authorization, "Bearer tok", "the input is left as it was");
  assert.ok(!JSON.stringify(redacted).includes("tok\"") && !JSON.stringify(redacted).includes("pw1"));
});
