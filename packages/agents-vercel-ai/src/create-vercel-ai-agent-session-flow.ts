/**
 * `createVercelAiAgentSessionFlow`: an AI SDK agent as a durable session.
 * The agent's model answers once per `RunModel` Step through the AI SDK
 * model client (tools offered as schemas only), and each tool call runs the
 * AI SDK tool's own `execute` in its own tool Step.
 */
import { ToolLoopAgent, type Instructions, type LanguageModel, type ToolSet } from "ai";
import type { AgentSessionFlow } from "@perdure/agents";
import { createAiSdkModelClient, type AiSdkModelClientOptions } from "@perdure/agents/ai-sdk";
import { AgentToolSet, createStepwiseAgentSessionFlow, type AgentDefinition, type FunctionTool, type ModelSettings } from "@perdure/agents/stepwise";
import { checkVercelAiAgentSettings } from "./vercel-ai-settings-check.ts";
import { toFunctionTools } from "./vercel-ai-tools.ts";

/** The parts of an AI SDK agent the session runs: what `new ToolLoopAgent(settings)` takes. */
export interface VercelAiAgentSettings {
  /** The agent's ID; names the Stepwise agent. @default "agent" */
  id?: string;
  model: LanguageModel;
  /** A string, or system messages whose texts are joined. @default "" */
  instructions?: Instructions;
  /** @default {} */
  tools?: ToolSet;
  temperature?: number;
  maxOutputTokens?: number;
  providerOptions?: Record<string, Record<string, unknown>>;
}

/** Options of {@link createVercelAiAgentSessionFlow}: the session's own settings, as for a Stepwise agent. */
export interface VercelAiAgentSessionOptions extends Omit<AgentDefinition, "name" | "instructions" | "model" | "tools" | "modelSettings"> {
  /** Options of the AI SDK model client (`createAiSdkModelClient`). @default {} */
  modelClientOptions?: AiSdkModelClientOptions;
  /**
   * Sub-agents as durable child sessions: tools made by `agentTool` from
   * `@perdure/agents/stepwise`, offered beside the agent's own tools.
   * @default []
   */
  agentTools?: readonly FunctionTool[];
}

/** A `ToolLoopAgent` or its settings. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any agent, whatever its call options, tools, context and output
export type VercelAiAgent = ToolLoopAgent<any, any, any, any> | VercelAiAgentSettings;

/**
 * The settings of a `ToolLoopAgent`. The AI SDK exposes no public accessor
 * for its model and instructions, so this reads the settings object the
 * agent keeps (see the package README's limits).
 */
function settingsOf(agent: VercelAiAgent): VercelAiAgentSettings {
  if (!(agent instanceof ToolLoopAgent)) return agent;
  const settings: unknown = Reflect.get(agent, "settings");
  if (typeof settings !== "object" || settings === null || !("model" in settings)) {
    throw new TypeError("this ToolLoopAgent keeps no readable settings (a newer AI SDK?); pass the settings object you gave new ToolLoopAgent(...) instead");
  }
  return settings as VercelAiAgentSettings;
}

function instructionsText(instructions: Instructions | undefined): string {
  if (instructions === undefined) return "";
  if (typeof instructions === "string") return instructions;
  const messages = Array.isArray(instructions) ? instructions : [instructions];
  return messages.map((message) => message.content).join("\n\n");
}

function modelSettingsOf(settings: VercelAiAgentSettings): ModelSettings | undefined {
  const modelSettings: ModelSettings = {
    ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    ...(settings.maxOutputTokens === undefined ? {} : { maxOutputTokens: settings.maxOutputTokens }),
    ...(settings.providerOptions === undefined ? {} : { providerOptions: settings.providerOptions }),
  };
  return Object.keys(modelSettings).length === 0 ? undefined : modelSettings;
}

/**
 * Makes the session Flow of an AI SDK agent.
 *
 * @example
 * import { openai } from "@ai-sdk/openai";
 * import { ToolLoopAgent, jsonSchema, tool } from "ai";
 * import { createVercelAiAgentSessionFlow, currentToolExecution } from "@perdure/agents-vercel-ai";
 *
 * const agent = new ToolLoopAgent({
 *   model: openai("gpt-5-mini"),
 *   instructions: "You help customers with their orders.",
 *   tools: {
 *     refund_order: tool({
 *       inputSchema: jsonSchema<{ orderId: string }>({ type: "object", properties: { orderId: { type: "string" } }, required: ["orderId"] }),
 *       needsApproval: true,
 *       execute: ({ orderId }) => payments.refund(orderId, { idempotencyKey: currentToolExecution()?.idempotencyKey }),
 *     }),
 *   },
 * });
 * export const supportFlow = createVercelAiAgentSessionFlow(agent, "SupportAgent", {
 *   toolPolicies: { refund_order: { effect: "non_idempotent_write" } },
 * });
 */
export function createVercelAiAgentSessionFlow(agent: VercelAiAgent, flowType: string, options: VercelAiAgentSessionOptions = {}): AgentSessionFlow {
  const settings = settingsOf(agent);
  checkVercelAiAgentSettings(settings);
  const { modelClientOptions, agentTools, ...sessionOptions } = options;
  const modelSettings = modelSettingsOf(settings);
  return createStepwiseAgentSessionFlow(
    {
      ...sessionOptions,
      name: settings.id ?? "agent",
      instructions: instructionsText(settings.instructions),
      model: createAiSdkModelClient(settings.model, modelClientOptions ?? {}),
      ...(modelSettings === undefined ? {} : { modelSettings }),
      tools: [...toFunctionTools(settings.tools ?? {}), ...new AgentToolSet(agentTools, settings.id ?? "agent").list],
    },
    flowType,
  );
}
