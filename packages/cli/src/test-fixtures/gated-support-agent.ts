/**
 * The entry module the `perdure dev` browser tests start the server on: a
 * support agent like examples/support-agent (a read tool, an approved
 * single-attempt write, a scripted model that streams word by word) whose
 * answers and tool calls about a few orders pause at a `FileGate` in
 * `PERDURE_TEST_GATE_DIRECTORY`, so a test can reload the page mid-answer or
 * kill the server during a tool call:
 *
 * - the answer about order 2001 streams its first sentence, then waits at
 *   gate `answer-2001` before the rest;
 * - `lookup_order` of order 2002 waits at gate `lookup_order-2002` (a read,
 *   retried after a crash);
 * - `refund_order` of order 2003 waits at gate `refund_order-2003` (a
 *   non-idempotent write, run in a single attempt).
 *
 * Every tool run writes `<tool>:start` and `<tool>:done` lines to the
 * InvocationLog `invocations.jsonl` in the same folder, across restarts.
 *
 * `build_report` starts a report as a tool task (`report-<order>`), which the
 * session polls every second; the task is done once gate `report-<order>`
 * opens, and its cancellation writes `build_report:cancel` to the log.
 *
 * It also has `ask_user`, `durable_wait`, `write_todos` and plan mode, with
 * the script of scripted-plans-and-questions.ts: "exchange order 1001" asks
 * which size, "check order 1002 again in 60 minutes" waits durably, and a
 * plan-mode message drafts a plan that an executing turn works through.
 */
import { join } from "node:path";
import { ToolExecutionError, type AgentEventWriter, type ToolTaskPollOutcome } from "@perdure/agents";
import { createStepwiseAgentSessionFlow, functionTool, ScriptedModelClient, type ModelClient, type ModelRequest, type ModelResponse, type ScriptedModelReply } from "@perdure/agents/stepwise";
import { FileGate, InvocationLog } from "@perdure/agents/testing";
import { replyWithBuiltInTools } from "./scripted-plans-and-questions.ts";

/** The environment variable naming the gate folder. */
export const gateDirectoryVariable = "PERDURE_TEST_GATE_DIRECTORY";

function gateDirectory(): string {
  const directory = process.env[gateDirectoryVariable];
  if (directory === undefined || directory === "") throw new Error(`${gateDirectoryVariable} is not set: the gated support agent needs a folder for its FileGates`);
  return directory;
}

const invocations = (): InvocationLog => new InvocationLog(join(gateDirectory(), "invocations.jsonl"));

interface Order {
  item: string;
  status: "processing" | "shipped" | "delivered" | "refunded";
  amountCents: number;
}

const orders = new Map<string, Order>([
  ["1001", { item: "Trail running shoes", status: "shipped", amountCents: 12_900 }],
  ["1002", { item: "Rain jacket", status: "processing", amountCents: 8_450 }],
  ["1003", { item: "Headlamp", status: "delivered", amountCents: 3_200 }],
  ["2001", { item: "Camping stove", status: "delivered", amountCents: 4_500 }],
  ["2002", { item: "Sleeping bag", status: "processing", amountCents: 9_900 }],
  ["2003", { item: "Two-person tent", status: "processing", amountCents: 24_900 }],
]);
const refundsByKey = new Map<string, string>();

const gatedAnswers = new Set(["2001"]);
const gatedTools = new Set(["lookup_order-2002", "refund_order-2003"]);

async function passToolGate(toolName: string, orderId: string, signal: AbortSignal): Promise<void> {
  if (gatedTools.has(`${toolName}-${orderId}`)) await new FileGate(gateDirectory(), `${toolName}-${orderId}`).waitUntilOpen({ signal });
}

const orderIdParameters = {
  type: "object",
  properties: { order_id: { type: "string", description: "The order number, such as 1001." } },
  required: ["order_id"],
  additionalProperties: false,
};

const lookupOrderTool = functionTool<{ order_id: string }>({
  name: "lookup_order",
  description: "Look up an order by its ID: the item, its status and its amount.",
  parameters: orderIdParameters,
  effect: "read",
  execute: async ({ order_id }, context) => {
    invocations().record("lookup_order:start", { order_id, attempt: context.attempt });
    await passToolGate("lookup_order", order_id, context.signal);
    const order = orders.get(order_id);
    if (order === undefined) throw new ToolExecutionError(`order ${order_id} does not exist`);
    invocations().record("lookup_order:done", { order_id, attempt: context.attempt });
    return { order_id, item: order.item, status: order.status, amount: `${(order.amountCents / 100).toFixed(2)} USD` };
  },
});

const refundOrderTool = functionTool<{ order_id: string }>({
  name: "refund_order",
  description: "Refund an order in full. Ask only when the customer wants a refund.",
  parameters: orderIdParameters,
  effect: "non_idempotent_write",
  execute: async ({ order_id }, context) => {
    invocations().record("refund_order:start", { order_id, attempt: context.attempt });
    await passToolGate("refund_order", order_id, context.signal);
    const done = refundsByKey.get(context.idempotencyKey);
    if (done !== undefined) return done;
    const order = orders.get(order_id);
    if (order === undefined) throw new ToolExecutionError(`order ${order_id} does not exist`);
    order.status = "refunded";
    const receipt = `refunded ${(order.amountCents / 100).toFixed(2)} USD for order ${order_id} (${order.item})`;
    refundsByKey.set(context.idempotencyKey, receipt);
    invocations().record("refund_order:done", { order_id, attempt: context.attempt });
    return receipt;
  },
});

const buildReportTool = functionTool<{ order_id: string }>({
  name: "build_report",
  description: "Build a shipping report for an order; it runs remotely and takes a while.",
  parameters: orderIdParameters,
  effect: "read",
  execute: ({ order_id }, context) => {
    invocations().record("build_report:start", { order_id, attempt: context.attempt });
    return { kind: "tool_task_started", taskId: `report-${order_id}`, pollIntervalSeconds: 1 };
  },
  pollTask: async (poll): Promise<ToolTaskPollOutcome> => {
    const orderId = (poll.toolCall.taskId ?? "").replace(/^report-/, "");
    if (!new FileGate(gateDirectory(), `report-${orderId}`).isOpen()) return { kind: "tool_task_pending", pollIntervalSeconds: 1 };
    invocations().record("build_report:done", { order_id: orderId });
    return { output: `report for order ${orderId}: ${orders.get(orderId)?.status ?? "unknown"}` };
  },
  cancelTask: async (cancellation) => {
    invocations().record("build_report:cancel", { task_id: cancellation.toolCall.taskId ?? "" });
  },
});

const statusSentences: Record<Order["status"], string> = {
  shipped: "It is on its way and should arrive within three working days; the tracking link is in your confirmation email.",
  processing: "It has not left the warehouse yet, so it can still be changed.",
  delivered: "It was delivered; ask for a refund within 30 days if anything is wrong with it.",
  refunded: "It was refunded in full.",
};

function describeResult(toolName: string, output: string): string {
  if (toolName === "build_report") return `The report is ready: ${output}.`;
  if (toolName !== "lookup_order") return `Refund result: ${output}`;
  try {
    const order = JSON.parse(output) as { order_id: string; item: string; status: Order["status"]; amount: string };
    return `Order ${order.order_id} (${order.item}, ${order.amount}) is ${order.status}. ${statusSentences[order.status] ?? ""}`.trim();
  } catch {
    return `The lookup said: ${output}`;
  }
}

/** The demo model's script: look orders up, ask to refund them, then report the tools' results. */
function reply(request: ModelRequest): ScriptedModelReply {
  const userText = ScriptedModelClient.userTexts(request).at(-1) ?? "";
  const results = ScriptedModelClient.toolResults(request);
  const summary = (): string => results.filter((result) => result.toolName === "lookup_order" || result.toolName === "refund_order").map((result) => describeResult(result.toolName, result.output)).join(" ");
  const withBuiltInTools = replyWithBuiltInTools(request, userText, results, summary);
  if (withBuiltInTools !== undefined) return withBuiltInTools;
  const orderId = /\b(\d{3,})\b/.exec(userText)?.[1];
  if (results.length > 0) return { text: results.map((result) => describeResult(result.toolName, result.output)).join(" ") };
  if (orderId !== undefined && /report/i.test(userText)) {
    return { text: `I will build the report for order ${orderId}.`, toolCalls: [{ name: "build_report", arguments: { order_id: orderId } }] };
  }
  if (orderId !== undefined && /refund/i.test(userText)) {
    return { text: `I can refund order ${orderId} once you approve it.`, toolCalls: [{ name: "refund_order", arguments: { order_id: orderId } }] };
  }
  if (orderId !== undefined) return { text: `Let me look up order ${orderId}.`, toolCalls: [{ name: "lookup_order", arguments: { order_id: orderId } }] };
  return { text: "Hello! Ask about an order (try: where is order 1001?) or ask for a refund (try: please refund order 1002)." };
}

/** The scripted model, pausing gated answers after their first sentence. */
class GatedScriptedModel implements ModelClient {
  private readonly scripted = new ScriptedModelClient(reply, { provider: "perdure-test" });
  readonly description = "the gated scripted model (perdure-test)";

  async call(request: ModelRequest): Promise<ModelResponse> {
    const orderId = /\b(\d{3,})\b/.exec(ScriptedModelClient.userTexts(request).at(-1) ?? "")?.[1];
    const answering = ScriptedModelClient.toolResults(request).length > 0;
    if (orderId === undefined || !answering || !gatedAnswers.has(orderId)) return this.scripted.call(request);
    const gate = new FileGate(gateDirectory(), `answer-${orderId}`);
    let streamed = "";
    let waited = false;
    const events: AgentEventWriter = {
      write: (type, payload) => request.events.write(type, payload),
      reasoningDelta: (text) => request.events.reasoningDelta(text),
      textDelta: async (text) => {
        if (!waited && /\.\s$/.test(streamed)) {
          waited = true;
          await gate.waitUntilOpen({ signal: request.signal });
        }
        streamed += text;
        await request.events.textDelta(text);
      },
    };
    return this.scripted.call({ ...request, events });
  }
}

export const gatedSupportAgentFlow = createStepwiseAgentSessionFlow(
  {
    name: "support",
    instructions: "You help customers of a small outdoor shop with their orders.",
    model: new GatedScriptedModel(),
    tools: [lookupOrderTool, refundOrderTool, buildReportTool],
    builtInTools: ["ask_user", "durable_wait", "write_todos"],
    planModeEnabled: true,
  },
  "SupportAgent",
);
