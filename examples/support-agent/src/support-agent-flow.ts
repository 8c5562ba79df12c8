import { ToolExecutionError } from "@perdure/agents";
import type { McpToolSource } from "@perdure/agents/mcp";
import { createStepwiseAgentSessionFlow, functionTool, type ModelClient } from "@perdure/agents/stepwise";
import { notesInstructions } from "./notes-tools.ts";
import { findOrder, refundOrder } from "./orders.ts";

const orderIdParameters = {
  type: "object",
  properties: { order_id: { type: "string", description: "The order number, such as 1001." } },
  required: ["order_id"],
  additionalProperties: false,
};

/** A read: safe to retry, runs without approval. */
export const lookupOrderTool = functionTool<{ order_id: string }>({
  name: "lookup_order",
  description: "Look up an order by its ID: the item, its status and its amount.",
  parameters: orderIdParameters,
  effect: "read",
  execute: ({ order_id }) => {
    const order = findOrder(order_id);
    if (order === undefined) throw new ToolExecutionError(`order ${order_id} does not exist`);
    return { order_id: order.orderId, item: order.item, status: order.status, amount: `${(order.amountCents / 100).toFixed(2)} USD` };
  },
});

/** A write that must not run twice: it asks for approval and runs in a single attempt. */
export const refundOrderTool = functionTool<{ order_id: string }>({
  name: "refund_order",
  description: "Refund an order in full. Ask only when the customer wants a refund.",
  parameters: orderIdParameters,
  effect: "non_idempotent_write",
  execute: ({ order_id }, context) => refundOrder(order_id, context.idempotencyKey),
});

export const supportInstructions = [
  "You are the support agent of a small outdoor shop.",
  "Look orders up with lookup_order before you answer questions about them.",
  "Refund with refund_order only when the customer asks for a refund; say what was refunded.",
  "When you need a detail only the customer knows, such as the size for an exchange, ask with ask_user.",
  "When the customer asks you to check again later, wait with durable_wait, then look the order up again.",
].join(" ");

/** Options of {@link createSupportAgentFlow}. */
export interface SupportAgentOptions {
  /** The notes MCP server's tools (notes-tools.ts). @default none: the agent has no notes tools */
  notes?: McpToolSource;
  /**
   * Models by name that a session picks with its settings' `model`; the
   * first is the default. With two or more, `perdure dev` shows a model
   * picker per session. @default none: always `model`
   */
  models?: Readonly<Record<string, ModelClient>>;
}

/** `resolveModel` and `modelChoices` for several models: a session's `model` setting picks one of them, else the default. */
function modelChoiceOptions(model: ModelClient, models: Readonly<Record<string, ModelClient>>) {
  const names = Object.keys(models);
  if (names.length < 2) return {};
  return {
    modelChoices: names,
    // Only clients this Worker built: the setting is a name, never a key or a URL.
    resolveModel: (settings: Readonly<Record<string, unknown>>): ModelClient => (typeof settings.model === "string" && Object.hasOwn(models, settings.model) ? models[settings.model] : undefined) ?? model,
  };
}

/**
 * The support agent's session Flow on a given model: two tools, the built-in
 * `ask_user`, `durable_wait` and `write_todos`, plan mode, so a person can
 * review a plan before anything runs, and, when given, the notes MCP
 * server's tools.
 */
export function createSupportAgentFlow(model: ModelClient, options: SupportAgentOptions = {}) {
  return createStepwiseAgentSessionFlow(
    {
      name: "support",
      instructions: options.notes === undefined ? supportInstructions : `${supportInstructions} ${notesInstructions}`,
      model,
      tools: [lookupOrderTool, refundOrderTool],
      ...(options.notes === undefined ? {} : { toolSources: [options.notes] }),
      ...modelChoiceOptions(model, options.models ?? {}),
      builtInTools: ["ask_user", "durable_wait", "write_todos"],
      planModeEnabled: true,
    },
    "SupportAgent",
  );
}
