import { ScriptedModelClient, type ModelRequest, type ScriptedModelReply } from "@perdure/agents/stepwise";
import { replyAboutNotes } from "./demo-notes.ts";
import { describeExchange, isExecutingPlan, isPlanningCall, replyInExecutingTurn, replyInPlanningTurn, replyToExchange, requestedWaitSeconds } from "./demo-plans.ts";

/**
 * The demo model used without a key: it reads the conversation and answers
 * deterministically, with the same tool calls a real model would make.
 */
export function replyAsDemoModel(request: ModelRequest): ScriptedModelReply {
  const userText = ScriptedModelClient.userTexts(request).at(-1) ?? "";
  const results = ScriptedModelClient.toolResults(request);
  const orderId = /\b(\d{3,})\b/.exec(userText)?.[1];
  if (isPlanningCall(request)) return replyInPlanningTurn(request, userText);
  const summary = (): string => results.filter((result) => result.toolName === "lookup_order" || result.toolName === "refund_order").map((result) => describeResult(result.toolName, result.output)).join(" ");
  if (isExecutingPlan(userText)) return replyInExecutingTurn(request, () => summary() || "Every task of the plan is done.");
  const asked = results.find((result) => result.toolName === "ask_user");
  if (asked !== undefined) return { text: describeExchange(orderId ?? "", asked.output) };
  if (results.some((result) => result.toolName === "durable_wait") && orderId !== undefined) {
    if (results.some((result) => result.toolName === "lookup_order")) return { text: summary() };
    return { text: "I waited as you asked; here is the order now.", toolCalls: [{ name: "lookup_order", arguments: { order_id: orderId } }] };
  }
  const aboutNotes = replyAboutNotes(request, userText, results);
  if (aboutNotes !== undefined) return aboutNotes;
  if (results.length > 0) {
    const summary = results.map((result) => describeResult(result.toolName, result.output)).join(" ");
    return { text: summary };
  }
  const waitSeconds = requestedWaitSeconds(userText);
  if (orderId !== undefined && waitSeconds !== undefined) {
    return {
      text: `I will check order ${orderId} again then; the wait is durable, so it survives restarts.`,
      toolCalls: [{ name: "durable_wait", arguments: { duration_seconds: waitSeconds, reason: `check order ${orderId} again` } }],
    };
  }
  if (orderId !== undefined && /exchange/i.test(userText)) return replyToExchange(orderId);
  if (orderId !== undefined && /refund/i.test(userText)) {
    return { text: `I can refund order ${orderId} once you approve it.`, toolCalls: [{ name: "refund_order", arguments: { order_id: orderId } }] };
  }
  if (orderId !== undefined) {
    return { text: `Let me look up order ${orderId}.`, toolCalls: [{ name: "lookup_order", arguments: { order_id: orderId } }] };
  }
  return {
    text: "Hello! I am the Perdure demo agent, running on a scripted model because no model key is set. "
      + "Ask about an order (try: where is order 1001?), ask for a refund (try: please refund order 1002), "
      + "an exchange, which asks you a question (try: exchange order 1001), or a durable wait (try: check order 1002 again in 30 seconds). "
      + (request.tools.some((tool) => tool.name.startsWith("notes__")) ? "The shop's notes live on an MCP server (try: what do our notes say?, or: add a note gift-wrap: wrap order 1001). " : "")
      + "Turn on Plan first to get a plan to approve before anything runs.",
  };
}

function describeResult(toolName: string, output: string): string {
  if (toolName === "lookup_order") {
    try {
      const order = JSON.parse(output) as { order_id: string; item: string; status: string; amount: string };
      return `Order ${order.order_id} (${order.item}, ${order.amount}) is ${order.status}.`;
    } catch {
      return `The lookup said: ${output}`;
    }
  }
  return `Refund result: ${output}`;
}

/** The scripted demo model client. */
export function createDemoModel(): ScriptedModelClient {
  return new ScriptedModelClient(replyAsDemoModel, { provider: "perdure-demo", description: "the scripted demo model (set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real one)" });
}
