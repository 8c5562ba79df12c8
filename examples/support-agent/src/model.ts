import type { ModelClient } from "@perdure/agents/stepwise";
import { createDemoModel } from "./demo-model.ts";

/**
 * The scripted demo model without a key. With OPENAI_API_KEY or
 * ANTHROPIC_API_KEY, the real provider through the AI SDK (install `ai` and
 * `@ai-sdk/openai` or `@ai-sdk/anthropic` first; they are optional).
 * `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` point the provider elsewhere, as
 * the provider packages read them; `PERDURE_MODEL` picks the model.
 */
export async function chooseModel(): Promise<{ model: ModelClient; description: string }> {
  const modelName = process.env.PERDURE_MODEL;
  if (process.env.OPENAI_API_KEY !== undefined && process.env.OPENAI_API_KEY !== "") {
    const [{ createAiSdkModelClient }, { openai }] = await Promise.all([import("@perdure/agents/ai-sdk"), import("@ai-sdk/openai" as string) as Promise<{ openai: (id: string) => never }>]);
    const id = modelName ?? "gpt-5-mini";
    return { model: createAiSdkModelClient(openai(id)), description: `OpenAI ${id} through the AI SDK` };
  }
  if (process.env.ANTHROPIC_API_KEY !== undefined && process.env.ANTHROPIC_API_KEY !== "") {
    const [{ createAiSdkModelClient }, { anthropic }] = await Promise.all([import("@perdure/agents/ai-sdk"), import("@ai-sdk/anthropic" as string) as Promise<{ anthropic: (id: string) => never }>]);
    const id = modelName ?? "claude-sonnet-4-5";
    return { model: createAiSdkModelClient(anthropic(id)), description: `Anthropic ${id} through the AI SDK` };
  }
  return { model: createDemoModel(), description: "scripted demo model (set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real one)" };
}
