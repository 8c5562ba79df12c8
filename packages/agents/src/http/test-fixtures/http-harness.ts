/**
 * The session HTTP API on a real SQLite file with a Worker in this process,
 * mounted either as the plain Fetch handler or inside a Hono app, and called
 * with plain `Request` objects. Two callers, alice and bob, are told apart
 * by a bearer token.
 */
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore, type TemporarySqliteStore } from "@perdure/engine/testing";
import { Hono } from "hono";
import type { AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { createStepwiseAgentSessionFlow } from "../../stepwise/create-stepwise-agent-session-flow.ts";
import { functionTool } from "../../stepwise/function-tool.ts";
import { ScriptedModelClient } from "../../stepwise/scripted-model-client.ts";
import type { ModelRequest } from "../../stepwise/model-client.ts";
import type { AgentHttpHandlerOptions } from "../agent-http-options.ts";
import { createAgentHttpHandler, type AgentHttpHandler } from "../create-agent-http-handler.ts";

/** How the handler is mounted. */
export type Mount = "plain" | "hono";

export const origin = "http://app.test";
export const tokens = { alice: "token-alice", bob: "token-bob" } as const;
export type User = keyof typeof tokens;

/** Every refund the tool ran, by order. */
export const refunds: string[] = [];

function reply(request: ModelRequest): { text: string; toolCalls?: { name: string; arguments: Record<string, unknown> }[] } {
  const userText = ScriptedModelClient.userTexts(request).at(-1) ?? "";
  const results = ScriptedModelClient.toolResults(request);
  if (results.length > 0) return { text: results.map((result) => `${result.toolName}: ${result.output}`).join(" ") };
  const orderId = /\b(\d{3,})\b/.exec(userText)?.[1] ?? "0";
  if (/refund/i.test(userText)) return { text: `Refunding order ${orderId} once you approve.`, toolCalls: [{ name: "refund_order", arguments: { order_id: orderId } }] };
  if (/size/i.test(userText)) return { text: "Which size?", toolCalls: [{ name: "ask_user", arguments: { question: "Which size?", choices: ["S", "M"], allows_free_text: false } }] };
  return { text: `You said: ${userText}` };
}

/** A support agent whose refunds need approval and which asks for a size. */
export function createSupportFlow(): AgentSessionFlow {
  const refundOrder = functionTool<{ order_id: string }>({
    name: "refund_order",
    description: "Refund an order.",
    parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"], additionalProperties: false },
    effect: "non_idempotent_write",
    requiresApproval: true,
    execute: ({ order_id }) => {
      refunds.push(order_id);
      return `refunded ${order_id}`;
    },
  });
  return createStepwiseAgentSessionFlow({
    name: "support",
    instructions: "Help with orders.",
    model: new ScriptedModelClient(reply, { provider: "http-test" }),
    tools: [refundOrder],
    builtInTools: ["ask_user"],
  }, "HttpSupportAgent");
}

/** Bearer-token authorization for alice and bob; anyone else gets a 401. */
export const authorizeByToken: AgentHttpHandlerOptions["authorize"] = ({ request }) => {
  const header = request.headers.get("authorization") ?? "";
  const user = (Object.keys(tokens) as User[]).find((name) => header === `Bearer ${tokens[name]}`);
  return user === undefined ? Response.json({ error: "unknown caller: send Authorization: Bearer <token>" }, { status: 401 }) : { principal: user };
};

export interface HttpHarness {
  client: Client;
  flow: AgentSessionFlow;
  temporary: TemporarySqliteStore;
  handler: AgentHttpHandler;
  /** Calls the mounted handler as `user` (or anonymously). */
  call(method: string, path: string, options?: { user?: User; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
  close(): Promise<void>;
}

/** Starts the store, the Worker and the handler under `/api`, mounted as `mount` says. */
export async function startHttpHarness(mount: Mount, overrides: Partial<AgentHttpHandlerOptions> = {}): Promise<HttpHarness> {
  const temporary = createTemporarySqliteStore();
  const flow = createSupportFlow();
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
  await worker.start();
  const client = new Client({ store: temporary.store });
  const handler = createAgentHttpHandler({ client, flows: [flow], basePath: "/api", authorize: authorizeByToken, ...overrides });
  let fetchMounted: (request: Request) => Promise<Response> = handler;
  if (mount === "hono") {
    const app = new Hono();
    app.get("/", (context) => context.text("the application's own page"));
    app.all("/api/*", (context) => handler(context.req.raw));
    fetchMounted = async (request) => app.fetch(request);
  }
  return {
    client,
    flow,
    temporary,
    handler,
    call: (method, path, options = {}) => {
      const headers: Record<string, string> = { ...(options.user === undefined ? {} : { authorization: `Bearer ${tokens[options.user]}` }), ...options.headers };
      if (options.body !== undefined) headers["content-type"] ??= "application/json";
      return fetchMounted(new Request(`${origin}${path}`, { method, headers, ...(options.body === undefined ? {} : { body: typeof options.body === "string" ? options.body : JSON.stringify(options.body) }) }));
    },
    close: async () => {
      await worker.close();
      await temporary.dispose();
    },
  };
}
