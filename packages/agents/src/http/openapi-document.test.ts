/**
 * The hand-written OpenAPI document against the route table: every route is
 * described with its operation ID, path parameters and body, and the
 * document describes no route the handler lacks.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { agentHttpActions } from "./agent-http-actions.ts";
import { agentHttpRoutes } from "./agent-http-routes.ts";
import { agentHttpOpenApiDocument } from "./openapi-document.ts";
import { startHttpHarness } from "./test-fixtures/http-harness.ts";

/** `/sessions/:id/cancel` as OpenAPI writes it: `/sessions/{id}/cancel`. */
function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, "{$1}");
}

it("the OpenAPI document describes exactly the routes of the route table", () => {
  const document = agentHttpOpenApiDocument("/api");
  assert.equal(document.openapi, "3.1.0");
  const described = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`)).sort();
  const served = agentHttpRoutes.map((route) => `${route.method} ${openApiPath(route.path)}`).sort();
  assert.deepEqual(described, served);
  assert.deepEqual(agentHttpRoutes.map((route) => route.action).sort(), [...agentHttpActions].sort(), "one route per action");
  for (const route of agentHttpRoutes) {
    const operation = document.paths[openApiPath(route.path)]?.[route.method.toLowerCase()] as { operationId: string; parameters?: { name: string; in: string }[]; requestBody?: { content: Record<string, unknown> }; security?: unknown[]; responses: Record<string, unknown> } | undefined;
    assert.ok(operation !== undefined, `${route.method} ${route.path}`);
    assert.equal(operation.operationId, route.action);
    const pathParameters = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((match) => match[1]);
    assert.deepEqual((operation.parameters ?? []).filter((parameter) => parameter.in === "path").map((parameter) => parameter.name), pathParameters, `${route.action}'s path parameters`);
    assert.equal(operation.requestBody !== undefined, route.method === "POST", `${route.action} has a request body exactly when it is a POST`);
    if (operation.requestBody !== undefined) assert.deepEqual(Object.keys(operation.requestBody.content), ["application/json"]);
    assert.equal(operation.security === undefined, route.isPublic === true, `${route.action} needs a caller exactly when it is not public`);
    if (route.path.includes(":id")) assert.ok("404" in operation.responses, `${route.action} documents the 404 of another principal's session`);
  }
});

it("the handler serves the document with its base path", async (t) => {
  const harness = await startHttpHarness("plain");
  t.after(() => harness.close());
  const response = await harness.call("GET", "/api/openapi.json");
  assert.equal(response.status, 200);
  const document = (await response.json()) as { servers: { url: string }[]; paths: Record<string, unknown> };
  assert.deepEqual(document.servers, [{ url: "/api" }]);
  assert.ok("/sessions/{id}/approvals/{interruptId}" in document.paths);
});
