import assert from "node:assert/strict";
import { test } from "node:test";
import { sameSiteRedirectTarget } from "./dev-access.ts";

void test("the redirect after a ?token= visit stays on this server whatever slashes the path starts with", () => {
  assert.equal(sameSiteRedirectTarget("http://127.0.0.1:4100/sessions?token=t&page=2"), "/sessions?page=2");
  assert.equal(sameSiteRedirectTarget("http://127.0.0.1:4100//evil.example/?token=t"), "/evil.example/");
  assert.equal(sameSiteRedirectTarget("http://127.0.0.1:4100/\\evil.example/?token=t"), "/evil.example/");
  assert.equal(sameSiteRedirectTarget("http://127.0.0.1:4100/?token=t"), "/");
});
