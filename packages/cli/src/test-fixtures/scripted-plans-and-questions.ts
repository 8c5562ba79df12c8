/**
 * What the gated support agent's scripted model does with the built-in
 * tools, as examples/support-agent/src/demo-plans.ts does for the demo: an
 * exchange asks which size with `ask_user` (and looks the order up at the
 * same time), "check again in <n> minutes"
 * waits with `durable_wait`, a planning turn writes the plan with
 * `write_todos`, and an executing turn works through it task by task.
 */
import type { ModelRequest, ScriptedModelReply } from "@perdure/agents/stepwise";

interface Todo {
  content: string;
  status: "pending" | "in_progress" | "completed";
}

function modelCallsInTurn(request: ModelRequest): number {
  const lastUser = request.input.map((item) => item.type).lastIndexOf("user_text");
  return request.input.slice(lastUser + 1).filter((item) => item.type === "model_output").length;
}

function latestTodos(request: ModelRequest): Todo[] {
  for (const item of [...request.input].reverse()) {
    if (item.type !== "model_output") continue;
    const call = item.tool_calls.findLast((candidate) => candidate.name === "write_todos");
    if (call !== undefined) return (JSON.parse(call.arguments) as { todos: Todo[] }).todos;
  }
  return [];
}

function taskTool(task: Todo | undefined): { name: string; arguments: Record<string, unknown> }[] {
  const match = /^(Look up|Refund) order (\d+)/.exec(task?.content ?? "");
  if (match?.[2] === undefined) return [];
  return [{ name: match[1] === "Refund" ? "refund_order" : "lookup_order", arguments: { order_id: match[2] } }];
}

/**
 * The reply when the request is one of these cases, else undefined.
 * `summarize` writes an answer from the turn's lookups and refunds.
 */
export function replyWithBuiltInTools(request: ModelRequest, userText: string, results: readonly { toolName: string; output: string }[], summarize: () => string): ScriptedModelReply | undefined {
  const orderId = /\b(\d{3,})\b/.exec(userText)?.[1];
  const step = modelCallsInTurn(request);
  if (request.tools.length > 0 && request.tools.every((tool) => tool.name === "write_todos")) {
    if (step > 0) return { text: "The plan is ready for your review: approve it to start, or tell me what to change." };
    const todos: Todo[] = orderId === undefined
      ? [{ content: "Work out which order the customer means", status: "pending" }, { content: "Answer the customer", status: "pending" }]
      : [
        { content: `Look up order ${orderId}`, status: "pending" },
        ...(/refund/i.test(userText) ? [{ content: `Refund order ${orderId}`, status: "pending" as const }] : []),
        { content: "Tell the customer what was done", status: "pending" },
      ];
    return { text: "Here is how I would handle it.", toolCalls: [{ name: "write_todos", arguments: { todos } }] };
  }
  if (/^\[Perdure\] The user approved plan revision \d+\./.test(userText)) {
    const tasks = latestTodos(request);
    const statuses = (current: number): Todo[] => tasks.map((task, index) => ({ content: task.content, status: index < current ? "completed" : index === current ? "in_progress" : "pending" }));
    if (step < tasks.length) return { toolCalls: [{ name: "write_todos", arguments: { todos: statuses(step) } }, ...taskTool(tasks[step])] };
    if (step === tasks.length) return { toolCalls: [{ name: "write_todos", arguments: { todos: statuses(tasks.length) } }] };
    return { text: summarize() };
  }
  const asked = results.find((result) => result.toolName === "ask_user");
  if (asked !== undefined) {
    const answer = (() => {
      try {
        return (JSON.parse(asked.output) as { answer?: string }).answer;
      } catch {
        return undefined;
      }
    })();
    return { text: answer === undefined ? `No problem, I left order ${orderId ?? ""} as it is.` : `Done: order ${orderId ?? ""} will be exchanged for size ${answer}.` };
  }
  if (results.some((result) => result.toolName === "durable_wait") && orderId !== undefined) {
    if (results.some((result) => result.toolName === "lookup_order")) return { text: summarize() };
    return { text: "I waited as you asked; here is the order now.", toolCalls: [{ name: "lookup_order", arguments: { order_id: orderId } }] };
  }
  if (results.length > 0 || orderId === undefined) return undefined;
  if (/exchange/i.test(userText)) {
    // The order is looked up while the question waits, so a gated lookup keeps the turn's stream open.
    return {
      text: `I can exchange order ${orderId}.`,
      toolCalls: [
        { name: "ask_user", arguments: { question: `Which size would you like instead for order ${orderId}?`, choices: ["S", "M", "L", "XL"], allows_free_text: false } },
        { name: "lookup_order", arguments: { order_id: orderId } },
      ],
    };
  }
  const wait = /\bagain in (\d+) minutes?\b/i.exec(userText);
  if (wait?.[1] !== undefined) {
    return { text: `I will check order ${orderId} again then.`, toolCalls: [{ name: "durable_wait", arguments: { duration_seconds: Number(wait[1]) * 60, reason: `check order ${orderId} again` } }] };
  }
  return undefined;
}
