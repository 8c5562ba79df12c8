/** The example's bearer-token parsing and authorization. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { bearerTokenAuthorize, parseTokens } from "./bearer-authorize.ts";

const request = (authorization?: string): Request => new Request("http://example.test/api/sessions", authorization === undefined ? {} : { headers: { authorization } });

test("parseTokens reads principal=token pairs and refuses bad ones by entry, never printing a token", () => {
  assert.deepEqual([...parseTokens(" alice=aaaaaaaaaaaaaaaa1 , bob=bbbbbbbbbbbbbbbb2")], [["aaaaaaaaaaaaaaaa1", "alice"], ["bbbbbbbbbbbbbbbb2", "bob"]]);
  assert.throws(() => parseTokens(""), /no tokens configured/);
  assert.throws(() => parseTokens("alice"), /token entry 1 is not principal=token/);
  assert.throws(() => parseTokens("alice=aaaaaaaaaaaaaaaa1,=bbbbbbbbbbbbbbbb2"), /token entry 2 is not principal=token/);
  assert.throws(() => parseTokens("alice=short-secret"), (error: Error) => /token of alice is shorter than 16/.test(error.message) && !error.message.includes("short-secret"));
  assert.throws(() => parseTokens("alice=aaaaaaaaaaaaaaaa1,bob=aaaaaaaaaaaaaaaa1"), /token of bob is also another principal's token/);
});

test("bearerTokenAuthorize admits a known token as its principal and refuses everything else with a 401", async () => {
  const authorize = bearerTokenAuthorize(parseTokens("alice=aaaaaaaaaaaaaaaa1,bob=bbbbbbbbbbbbbbbb2"));
  const ask = (authorization?: string) => authorize({ request: request(authorization), action: "listSessions" });
  assert.deepEqual(await ask("Bearer aaaaaaaaaaaaaaaa1"), { principal: "alice" });
  assert.deepEqual(await ask("bearer bbbbbbbbbbbbbbbb2"), { principal: "bob" });
  for (const [header, error] of [[undefined, /send Authorization/], ["Bearer aaaaaaaaaaaaaaaa", /unknown token/], ["Bearer aaaaaaaaaaaaaaaa1 x", /not Bearer <token>/], ["Basic aaaaaaaaaaaaaaaa1", /not Bearer <token>/]] as const) {
    const refused = await ask(header);
    assert.ok(refused instanceof Response, String(header));
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get("www-authenticate"), 'Bearer realm="perdure"');
    assert.match(((await refused.json()) as { error: string }).error, error);
  }
});
