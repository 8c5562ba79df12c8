/**
 * AI SDK tools as Stepwise function tools: the model is offered the tool's
 * schema only, and the tool Step runs its `execute` inside the call's
 * tool-execution scope (`currentToolExecution()`).
 */
import { asSchema, type ToolSet } from "ai";
import { functionTool, type FunctionTool, type JsonSchema, type ToolApprovalSetting, type ToolCallContext } from "@perdure/agents/stepwise";

type AiSdkTool = ToolSet[string];

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function";
}

/** The tool's JSON Schema, which the session needs when the flow is defined. */
function parametersOf(name: string, aiTool: AiSdkTool): JsonSchema {
  const schema = asSchema(aiTool.inputSchema).jsonSchema;
  if (isPromiseLike(schema)) {
    throw new TypeError(`AI SDK tool ${name} has a schema whose JSON Schema is only known asynchronously; declare its inputSchema with jsonSchema(...) or a zod schema`);
  }
  return schema as JsonSchema;
}

/** Checks the arguments with the tool's own schema (zod and friends may also transform them). */
async function validatedInput(name: string, aiTool: AiSdkTool, argumentsValue: unknown): Promise<unknown> {
  const schema = asSchema(aiTool.inputSchema);
  if (schema.validate === undefined) return argumentsValue;
  const result = await schema.validate(argumentsValue);
  if (!result.success) throw new TypeError(`the arguments of AI SDK tool ${name} do not match its inputSchema: ${result.error.message}`);
  return result.value;
}

/** A streaming `execute` (an async iterable) reports progress; its last value is the output. */
async function finalOutput(output: unknown): Promise<unknown> {
  if (!isAsyncIterable(output)) return output;
  let last: unknown;
  for await (const value of output) last = value;
  return last;
}

/** A description given as a function of the call's context is read once, with an empty context. */
function descriptionOf(aiTool: AiSdkTool): string {
  const description: unknown = aiTool.description;
  if (typeof description === "function") return String((description as (options: { context: unknown }) => unknown)({ context: {} }));
  return typeof description === "string" ? description : "";
}

/**
 * The tool's own approval setting, as the session reads it: `needsApproval:
 * true` or `false` as given, and a function evaluated for each call in
 * `RunModel` on the call's checked input, as the AI SDK would (input that
 * fails the tool's schema asks). The effect comes from the session's
 * `toolPolicies` or its `defaultToolEffect`; AI SDK tools do not declare one.
 */
export function toolApprovalOf(name: string, aiTool: AiSdkTool): ToolApprovalSetting | undefined {
  const needsApproval: unknown = aiTool.needsApproval;
  if (needsApproval === undefined || typeof needsApproval === "boolean") return needsApproval;
  if (typeof needsApproval !== "function") throw new TypeError(`AI SDK tool ${name} has a needsApproval that is neither a boolean nor a function`);
  const decide = needsApproval as (input: unknown, options: { toolCallId: string; messages: []; context: unknown }) => boolean | PromiseLike<boolean>;
  return async (argumentsValue, context) => {
    let input: unknown;
    try {
      input = await validatedInput(name, aiTool, argumentsValue);
    } catch {
      return true;
    }
    return decide(input, { toolCallId: context.toolCallId, messages: [], context: {} });
  };
}

/** Wraps every AI SDK tool with an `execute` as a function tool; schema-only tools are refused, since no Step could run them. */
export function toFunctionTools(tools: ToolSet): FunctionTool[] {
  return Object.entries(tools).map(([name, aiTool]) => {
    const execute = aiTool.execute;
    if (typeof execute !== "function") {
      throw new TypeError(`AI SDK tool ${name} has no execute function; a durable session runs every tool in its own Step, so give it one`);
    }
    const approval = toolApprovalOf(name, aiTool);
    return functionTool({
      name,
      description: descriptionOf(aiTool),
      parameters: parametersOf(name, aiTool),
      ...(approval === undefined ? {} : { requiresApproval: approval }),
      execute: async (argumentsValue: unknown, context: ToolCallContext) => {
        const input = await validatedInput(name, aiTool, argumentsValue);
        // The session runs this inside the call's tool-execution scope: execute reads it with currentToolExecution().
        return finalOutput(await execute(input as never, { toolCallId: context.toolCallId, messages: [], abortSignal: context.signal, context: {} as never }));
      },
    });
  });
}
