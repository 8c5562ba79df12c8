/**
 * The model the agent talks to, chosen by environment variable:
 *
 * - `OPENAI_API_KEY` set: OpenAI through the AI SDK (`gpt-5-mini`);
 * - `ANTHROPIC_API_KEY` set: Anthropic through the AI SDK (`claude-sonnet-4-5`);
 * - neither: the scripted demo model below, so the app runs with no key.
 *
 * `PERDURE_MODEL` names another model of that provider, and
 * `OPENAI_BASE_URL` or `ANTHROPIC_BASE_URL` point the provider at a
 * compatible endpoint (the provider packages read them).
 */
import { anthropic } from "@ai-sdk/anthropic";
import { openai } from "@ai-sdk/openai";
import { createAiSdkModelClient } from "@perdure/agents/ai-sdk";
import { ScriptedModelClient, type ModelClient, type ModelRequest, type ScriptedModelReply } from "@perdure/agents/stepwise";

export function chooseModel(environment: NodeJS.ProcessEnv = process.env): ModelClient {
  const modelName = environment.PERDURE_MODEL?.trim() || undefined;
  if (environment.OPENAI_API_KEY) return createAiSdkModelClient(openai(modelName ?? "gpt-5-mini"));
  if (environment.ANTHROPIC_API_KEY) return createAiSdkModelClient(anthropic(modelName ?? "claude-sonnet-4-5"));
  return demoModel;
}

/** The demo model's script: looks orders up, asks to refund them, and reports what the tools returned. */
function demoReply(request: ModelRequest): ScriptedModelReply {
  const results = ScriptedModelClient.toolResults(request);
  if (results.length > 0) return { text: results.map((result) => result.output).join(" ") };
  const text = ScriptedModelClient.userTexts(request).at(-1) ?? "";
  const id = /\b(\d{4})\b/.exec(text)?.[1];
  if (id !== undefined && /refund/i.test(text)) return { text: `I can refund order ${id} once you approve it.`, toolCalls: [{ name: "refund_order", arguments: { order_id: id } }] };
  if (id !== undefined) return { toolCalls: [{ name: "lookup_order", arguments: { order_id: id } }] };
  return { text: "Hello! Ask where order 1001 is, or ask me to refund order 1002." };
}

export const demoModel = new ScriptedModelClient(demoReply, { provider: "demo", description: "the scripted demo model (set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real one)" });
