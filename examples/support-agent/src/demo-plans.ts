/**
 * The demo model's planning, questions and durable waits: what a real model
 * does with `write_todos`, `ask_user` and `durable_wait`, scripted over the
 * conversation so the demo needs no key.
 */
import type { ModelRequest, ScriptedModelReply } from "@perdure/agents/stepwise";

/** A task of a `write_todos` call. */
interface Todo {
  content: string;
  status: "pending" | "in_progress" | "completed";
}

/** The message the session writes when a person approves a plan (`[Perdure] The user approved plan revision <n>. …`). */
const approvedPlanPattern = /^\[Perdure\] The user approved plan revision \d+\./;

/** A planning turn offers the model only `write_todos`. */
export function isPlanningCall(request: ModelRequest): boolean {
  return request.tools.length > 0 && request.tools.every((tool) => tool.name === "write_todos");
}

/** Whether the turn's user message is the session's note that a plan was approved. */
export function isExecutingPlan(userText: string): boolean {
  return approvedPlanPattern.test(userText);
}

/** The model outputs since the turn's user message: which model call of the turn this is. */
function modelCallsInTurn(request: ModelRequest): number {
  const lastUser = request.input.map((item) => item.type).lastIndexOf("user_text");
  return request.input.slice(lastUser + 1).filter((item) => item.type === "model_output").length;
}

/** The tasks of the latest `write_todos` call the model made, in this turn or an earlier one. */
function latestTodos(request: ModelRequest): Todo[] {
  for (const item of [...request.input].reverse()) {
    if (item.type !== "model_output") continue;
    const call = item.tool_calls.findLast((candidate) => candidate.name === "write_todos");
    if (call === undefined) continue;
    try {
      const parsed = JSON.parse(call.arguments) as { todos?: Todo[] };
      if (Array.isArray(parsed.todos)) return parsed.todos;
    } catch {
      // Not JSON: look further back.
    }
  }
  return [];
}

/** The plan for a customer's request: look the order up, refund it when asked, and report. */
export function draftPlan(userText: string): Todo[] {
  const orderId = /\b(\d{3,})\b/.exec(userText)?.[1];
  const pending = (content: string): Todo => ({ content, status: "pending" });
  if (orderId === undefined) return [pending("Work out which order the customer means"), pending("Answer the customer")];
  const steps = [pending(`Look up order ${orderId}`)];
  if (/refund/i.test(userText)) steps.push(pending(`Refund order ${orderId}`));
  steps.push(pending("Tell the customer what was done"));
  return steps;
}

/** A planning turn: write the plan, then ask for its review. */
export function replyInPlanningTurn(request: ModelRequest, userText: string): ScriptedModelReply {
  if (modelCallsInTurn(request) === 0) {
    return { text: "Here is how I would handle it.", toolCalls: [{ name: "write_todos", arguments: { todos: draftPlan(userText) } }] };
  }
  return { text: "The plan is ready for your review: approve it to start, or tell me what to change." };
}

/** The tool a plan task runs, if any. */
function toolCallOfTask(task: Todo): { name: string; arguments: Record<string, unknown> } | undefined {
  const lookup = /^Look up order (\d+)/.exec(task.content);
  if (lookup?.[1] !== undefined) return { name: "lookup_order", arguments: { order_id: lookup[1] } };
  const refund = /^Refund order (\d+)/.exec(task.content);
  if (refund?.[1] !== undefined) return { name: "refund_order", arguments: { order_id: refund[1] } };
  return undefined;
}

/**
 * An executing turn: one model call per task, each marking its task
 * `in_progress` (and the earlier ones `completed`) with `write_todos` and
 * running the task's tool; then every task `completed`; then the summary,
 * which `summarize` writes from the tools' results.
 */
export function replyInExecutingTurn(request: ModelRequest, summarize: () => string): ScriptedModelReply {
  const tasks = latestTodos(request);
  const step = modelCallsInTurn(request);
  const withStatuses = (inProgress: number): Todo[] => tasks.map((task, index) => ({
    content: task.content,
    status: index < inProgress ? "completed" : index === inProgress ? "in_progress" : "pending",
  }));
  if (step < tasks.length) {
    const task = tasks[step];
    const action = task === undefined ? undefined : toolCallOfTask(task);
    return { toolCalls: [{ name: "write_todos", arguments: { todos: withStatuses(step) } }, ...(action === undefined ? [] : [action])] };
  }
  if (step === tasks.length) return { toolCalls: [{ name: "write_todos", arguments: { todos: withStatuses(tasks.length) } }] };
  return { text: summarize() };
}

/** `ask_user` for an exchange: which size, from a fixed list. */
export function replyToExchange(orderId: string): ScriptedModelReply {
  return {
    text: `I can exchange order ${orderId}.`,
    toolCalls: [{ name: "ask_user", arguments: { question: `Which size would you like instead for order ${orderId}?`, choices: ["S", "M", "L", "XL"], allows_free_text: false } }],
  };
}

/** The answer to an exchange question, from the `ask_user` result the model sees. */
export function describeExchange(orderId: string, output: string): string {
  try {
    const result = JSON.parse(output) as { status?: string; answer?: string };
    if (result.status === "answered" && typeof result.answer === "string") return `Done: order ${orderId} will be exchanged for size ${result.answer}. A return label is on its way.`;
  } catch {
    // A decline or a passed deadline is plain text.
  }
  return `No problem, I left order ${orderId} as it is (${output.replace(/\.$/, "")}).`;
}

/** A wait the customer asked for: "check again in 30 seconds", "… tomorrow". */
export function requestedWaitSeconds(userText: string): number | undefined {
  if (/\btomorrow\b/i.test(userText)) return 86_400;
  const match = /\bin (\d+) (second|minute|hour)s?\b/i.exec(userText);
  if (match?.[1] === undefined || match[2] === undefined) return undefined;
  const unit = { second: 1, minute: 60, hour: 3600 }[match[2].toLowerCase() as "second" | "minute" | "hour"];
  return Number(match[1]) * unit;
}
