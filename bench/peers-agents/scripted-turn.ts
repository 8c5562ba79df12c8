/**
 * The scripted model and tools of one benchmark turn, shared by every
 * system: model call 1 asks for a read, model call 2 for an idempotent
 * write, model call 3 answers. Nothing waits: every millisecond measured is
 * the system around the calls.
 */

export const readToolName = "lookup_order";
export const writeToolName = "tag_order";

export type ScriptedModelReply = { toolCall: { name: string; arguments: Record<string, unknown> } } | { text: string };

/** What the scripted model answers to call `modelCall` (1–3) of a turn about `orderId`. */
export function scriptedModelReply(modelCall: number, orderId: string): ScriptedModelReply {
  if (modelCall === 1) return { toolCall: { name: readToolName, arguments: { order_id: orderId } } };
  if (modelCall === 2) return { toolCall: { name: writeToolName, arguments: { order_id: orderId, tag: "checked" } } };
  return { text: `Order ${orderId} has shipped; I tagged it as checked.` };
}

export function runReadTool(argumentsValue: Record<string, unknown>): string {
  return `order ${String(argumentsValue["order_id"])}: shipped`;
}

export function runWriteTool(argumentsValue: Record<string, unknown>): string {
  return `order ${String(argumentsValue["order_id"])} tagged ${String(argumentsValue["tag"])}`;
}

let modelDelayMs = 0;

/** Sets how long every system's scripted model takes to answer (the 0 ms and 50 ms models). */
export function setModelDelayMs(milliseconds: number): void {
  modelDelayMs = milliseconds;
}

export function currentModelDelayMs(): number {
  return modelDelayMs;
}

/** Waits as long as a model call takes in this run (nothing at 0 ms). */
export async function modelLatency(): Promise<void> {
  if (modelDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, modelDelayMs));
}
