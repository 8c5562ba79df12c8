/**
 * The order desk on the Claude Agent SDK, made durable by
 * `@perdure/agents-claude-agent-sdk`: the Claude Code harness runs the loop,
 * reads (`readOnlyHint`) run inside it, and the refund and the notes writes
 * run in tool Steps. Without ANTHROPIC_API_KEY the harness talks to a
 * loopback fake of the Messages API that follows the demo script.
 */
import { tool } from "@anthropic-ai/claude-agent-sdk";
import { createClaudeAgentSdkSessionFlow, currentToolExecution, zodRawShapeFromJsonSchema } from "@perdure/agents-claude-agent-sdk";
import { readFakeRequest, startFakeMessagesApi } from "@perdure/agents-claude-agent-sdk/testing";
import { claudeNotesTools, notes } from "./notes-tools.ts";
import { lookUpOrder, nextDemoStep, orderDeskInstructions, refundOrder } from "./order-desk.ts";

const orderInput = zodRawShapeFromJsonSchema({ type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] });

function text(value: string): { content: { type: "text"; text: string }[] } {
  return { content: [{ type: "text", text: value }] };
}

/** The demo model without a key: a loopback fake of the Messages API following the order-desk script. */
async function demoEnvironment(): Promise<Record<string, string>> {
  if (process.env.ANTHROPIC_API_KEY !== undefined && process.env.ANTHROPIC_API_KEY !== "") return {};
  const api = await startFakeMessagesApi(async (request) => {
    const facts = readFakeRequest(request);
    const step = nextDemoStep(facts.lastUserText, facts.turnToolResults.map((result) => result.output), "Claude Agent SDK");
    if ("text" in step) return { kind: "text", text: step.text };
    return { kind: "tool_use", id: `toolu_demo_${request.messages.length}`, name: `mcp__perdure__${step.toolName}`, input: step.arguments };
  });
  return { ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: "sk-demo-fake", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" };
}

const environment = await demoEnvironment();

export const claudeOrderDeskFlow = createClaudeAgentSdkSessionFlow({
  systemPrompt: orderDeskInstructions,
  tools: [
    tool("lookup_order", "Look up an order by its ID.", orderInput, async (args) => text(lookUpOrder(String(args.order_id))), { annotations: { readOnlyHint: true } }),
    tool("refund_order", "Refund an order. Only when the customer asks.", orderInput, async (args) => {
      const orderId = String(args.order_id);
      return text(refundOrder(orderId, currentToolExecution()?.idempotencyKey ?? `local/${orderId}`));
    }),
    ...claudeNotesTools(),
  ],
}, "ClaudeAgentSdkOrderDesk", {
  // Add `model` here for a real key, such as "claude-sonnet-5-5".
  queryOptions: { env: environment },
  toolPolicies: { ...notes.toolPolicies(), lookup_order: { effect: "read" }, refund_order: { effect: "non_idempotent_write" } },
});
