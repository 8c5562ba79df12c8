import type { ModelClient } from "@perdure/agents/stepwise";
import { createDemoModel } from "./demo-model.ts";

/**
 * The scripted demo model without a key. With OPENAI_API_KEY or
 * ANTHROPIC_API_KEY, the real provider through the AI SDK (install `ai` and
 * `@ai-sdk/openai` or `@ai-sdk/anthropic` first; they are optional).
 * `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` point the provider elsewhere, as
 * the provider packages read them; `PERDURE_MODEL` picks the model.
 */
export async function chooseModel(modelName: string | undefined = process.env.PERDURE_MODEL?.split(",")[0]?.trim()): Promise<{ model: ModelClient; description: string }> {
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

/**
 * Every model `PERDURE_MODEL` names, comma-separated (`gpt-5-mini,gpt-5`), by
 * name, the first being the default; with a single name or none, only
 * `chooseModel()`'s model. Several models give `perdure dev` a model picker
 * per session, through the session settings' `model`.
 */
export async function chooseModels(): Promise<{ models: Record<string, ModelClient>; defaultModel: ModelClient }> {
  const names = (process.env.PERDURE_MODEL ?? "").split(",").map((name) => name.trim()).filter((name) => name !== "");
  const hasKey = (process.env.OPENAI_API_KEY ?? "") !== "" || (process.env.ANTHROPIC_API_KEY ?? "") !== "";
  if (names.length < 2 || !hasKey) {
    const { model } = await chooseModel();
    return { models: {}, defaultModel: model };
  }
  const models: Record<string, ModelClient> = {};
  for (const name of names) models[name] = (await chooseModel(name)).model;
  return { models, defaultModel: models[names[0] as string] as ModelClient };
}
