/**
 * A Mastra agent's tools on both sides of the deferral: as the model is
 * offered them in `RunModel` (Mastra client tools, which Mastra hands back
 * instead of running), and as a tool Step runs them, with the call's
 * idempotency key in Mastra's request context.
 */
import type { ToolsInput } from "@mastra/core/agent";
import { RequestContext } from "@mastra/core/request-context";
import { createTool, isProviderTool, isValidationError, isVercelTool } from "@mastra/core/tools";
import { ToolExecutionError, type BuiltInToolDefinition, type DeferredToolExecution, type FrameworkToolPolicy, type ToolEffect } from "@perdure/agents";
import { idempotencyKeyRequestContextKey } from "./idempotency-key.ts";

/** One tool of a Mastra agent: a `createTool` tool, an AI SDK tool, or a provider tool. */
export type MastraTool = ToolsInput[string];

interface MastraToolFields {
  execute?: (input: unknown, context: unknown) => unknown;
  /** Mastra's `Tool` keeps a function given to `createTool({ requireApproval })` as it is. */
  requireApproval?: boolean | ((input: unknown, context?: unknown) => boolean | Promise<boolean>);
  needsApprovalFn?: (input: unknown, context?: unknown) => boolean | Promise<boolean>;
  needsApproval?: boolean | ((input: unknown, options: unknown) => boolean | Promise<boolean>);
  mcp?: { annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean } };
  /** Set on the tools Mastra's MCP client builds from an MCP server's tools. */
  mcpMetadata?: { serverName?: string };
}

function fieldsOf(tool: MastraTool): MastraToolFields {
  return tool as MastraToolFields;
}

/**
 * The tool as the model is offered it: the same schema and description, no
 * `execute` and no approval of Mastra's own, so Mastra's loop hands the call
 * back as a client tool call instead of running or suspending it.
 */
export function schemaOnlyTool(tool: MastraTool): MastraTool {
  const schema: Record<string, unknown> = { ...tool };
  for (const field of ["execute", "requireApproval", "needsApprovalFn", "needsApproval"]) delete schema[field];
  return schema as MastraTool;
}

/** A session built-in tool (such as `ask_user`) as a schema-only Mastra tool; the session handles its calls. */
export function builtInClientTool(definition: Pick<BuiltInToolDefinition, "description" | "parameters"> & { name: string }): MastraTool {
  return createTool({ id: definition.name, description: definition.description, inputSchema: definition.parameters as never }) as MastraTool;
}

/** Refuses tools no Step can run: provider tools run on the provider's side, and a tool without `execute` has nothing to run. */
export function checkDeferrableTool(agentName: string, name: string, tool: MastraTool): void {
  if (isProviderTool(tool)) throw new TypeError(`agent ${agentName} has the provider tool ${name}, which runs on the model provider's side; a durable session runs every tool in its own Step`);
  if (typeof fieldsOf(tool).execute !== "function") {
    throw new TypeError(`agent ${agentName} has the tool ${name} without an execute function; a durable session runs every tool in its own Step, so give it one`);
  }
}

/** The contract's MCP effects table, for a tool Mastra's MCP client built from an MCP server's tool. */
function effectOfMcpAnnotations(tool: MastraTool): ToolEffect | undefined {
  const annotations = fieldsOf(tool).mcp?.annotations;
  if (annotations?.readOnlyHint === true) return "read";
  if (annotations?.idempotentHint === true) return "idempotent_write";
  return undefined;
}

/**
 * Whether the tool asks for approval of this call, as Mastra's loop would
 * decide it: `needsApprovalFn` (which Mastra's MCP client sets), else
 * `requireApproval` as a flag or as the per-call function `createTool`
 * keeps, or an AI SDK tool's `needsApproval`. Mastra stores an absent
 * `requireApproval` as `false`, so only `true` or a function's answer says
 * anything.
 */
async function requiresApprovalOf(tool: MastraTool, input: unknown, toolCallId: string, requestContext: RequestContext): Promise<boolean | undefined> {
  const fields = fieldsOf(tool);
  if (isVercelTool(tool)) {
    if (typeof fields.needsApproval === "function") return (await fields.needsApproval(input, { toolCallId, messages: [] })) === true;
    return fields.needsApproval;
  }
  const approvalContext = { requestContext: Object.fromEntries(requestContext.entries()) };
  if (fields.needsApprovalFn !== undefined) return (await fields.needsApprovalFn(input, approvalContext)) === true;
  if (typeof fields.requireApproval === "function") return (await fields.requireApproval(input, approvalContext)) === true;
  return fields.requireApproval === true ? true : undefined;
}

/**
 * What the tool says of itself, evaluated on the call's input: an effect from
 * MCP annotations, and its approval setting. A failing approval function
 * asks for approval. The session's `toolPolicies` win over both.
 */
export async function frameworkPolicyOf(tool: MastraTool, argumentsText: string, toolCallId: string, requestContext: RequestContext): Promise<FrameworkToolPolicy | undefined> {
  const effect = effectOfMcpAnnotations(tool);
  let requiresApproval: boolean | undefined;
  try {
    requiresApproval = await requiresApprovalOf(tool, JSON.parse(argumentsText === "" ? "{}" : argumentsText) as unknown, toolCallId, requestContext);
  } catch (error) {
    console.warn(`perdure agents-mastra: the approval function of the tool of call ${toolCallId} threw, so the call asks for approval:`, error);
    requiresApproval = true;
  }
  if (effect === undefined && requiresApproval === undefined) return undefined;
  return { ...(effect === undefined ? {} : { effect }), ...(requiresApproval === undefined ? {} : { requiresApproval }) };
}

/** An MCP `tools/call` result, as Mastra's MCP client tools return it. */
interface McpCallResult {
  content: { type: string; text?: string }[];
  isError?: boolean;
}

function isMcpCallResult(output: unknown): output is McpCallResult {
  return typeof output === "object" && output !== null && Array.isArray((output as { content?: unknown }).content);
}

/**
 * The output as the text the session records and the model reads. An MCP
 * client tool's result reads as the contract's MCP tools do: text blocks
 * joined with newlines, other blocks as JSON, and an `isError` result as a
 * failure the model sees.
 */
function outputText(tool: MastraTool, output: unknown): string {
  if (fieldsOf(tool).mcpMetadata !== undefined && isMcpCallResult(output)) {
    const text = output.content.map((block) => (block.type === "text" ? block.text ?? "" : JSON.stringify(block))).join("\n");
    if (output.isError === true) throw new ToolExecutionError(text);
    return text;
  }
  if (typeof output === "string") return output;
  return JSON.stringify(output ?? null);
}

/**
 * Runs the tool of one deferred call, as Mastra's loop would, with a fresh
 * request context that holds the call's idempotency key under
 * {@link idempotencyKeyRequestContextKey}. A Mastra tool's input validation
 * error becomes a `ToolExecutionError`, so the call is recorded as failed
 * and the model reads why.
 */
export async function executeMastraTool(agentId: string, tool: MastraTool, call: DeferredToolExecution, requestContext: RequestContext = new RequestContext()): Promise<string> {
  const execute = fieldsOf(tool).execute;
  if (execute === undefined) throw new Error(`tool ${call.toolCall.toolName} has no execute function`);
  requestContext.set(idempotencyKeyRequestContextKey, call.idempotencyKey);
  const input: unknown = JSON.parse(call.toolCall.arguments === "" ? "{}" : call.toolCall.arguments);
  const toolCallId = call.toolCall.toolCallId;
  const suspend = async (): Promise<void> => {
    throw new ToolExecutionError(`tool ${call.toolCall.toolName} suspended; a durable session cannot resume a suspended Mastra tool (see the package README's limits)`);
  };
  const context = isVercelTool(tool)
    ? { toolCallId, messages: [], abortSignal: call.cancellationSignal, requestContext, context: {} }
    : { requestContext, abortSignal: call.cancellationSignal, agent: { agentId, toolCallId, messages: [], suspend } };
  const output: unknown = await execute(input, context);
  if (isValidationError(output)) throw new ToolExecutionError(output.message);
  return outputText(tool, output);
}
