/**
 * The agent's SDK MCP tools on both sides: served to the harness by one
 * in-process MCP server, and run by a tool Step through their handler
 * inside `currentToolExecution()`. The session's built-in tools are
 * served alongside them, schemas converted to zod raw shapes.
 */
import { createSdkMcpServer, tool, type McpSdkServerConfigWithInstance, type SdkMcpToolDefinition } from "@anthropic-ai/claude-agent-sdk";
import { ToolExecutionError, type BuiltInToolDefinition, type DeferredToolExecution, type FrameworkToolPolicy } from "@perdure/agents";
import { z } from "zod";
import { zodRawShapeFromJsonSchema } from "./zod-raw-shape.ts";

/**
 * An SDK MCP tool of any argument shape, as `tool(...)` of the SDK makes it.
 * Its handler takes `never` here so that a tool of every shape fits; the
 * tool Step checks the arguments with `inputSchema` before it calls it.
 */
export interface ClaudeSdkTool {
  name: string;
  description: string;
  inputSchema: SdkMcpToolDefinition["inputSchema"];
  annotations?: SdkMcpToolDefinition["annotations"] | undefined;
  handler: (args: never, extra: unknown) => ReturnType<SdkMcpToolDefinition["handler"]>;
}

/** The name of the in-process MCP server that serves the agent's tools to the harness. */
export const claudeToolServerName = "perdure";

const toolNamePrefix = `mcp__${claudeToolServerName}__`;

/** The name the model calls a tool by. */
export function harnessToolName(name: string): string {
  return `${toolNamePrefix}${name}`;
}

/** The session's name of a tool the model called: the SDK MCP tool's own name, or the harness's name of one of its built-in tools. */
export function sessionToolName(harnessName: string): string {
  return harnessName.startsWith(toolNamePrefix) ? harnessName.slice(toolNamePrefix.length) : harnessName;
}

/** A built-in tool of the session as an SDK MCP tool; the session handles its calls, so the harness never runs it. */
function builtInSdkTool(definition: BuiltInToolDefinition): ClaudeSdkTool {
  return tool(definition.name, definition.description, zodRawShapeFromJsonSchema(definition.parameters as Record<string, unknown>), async () => {
    throw new Error(`built-in tool ${definition.name} is handled by the session`);
  }) as ClaudeSdkTool;
}

/**
 * The MCP server of one run: the agent's tools and the turn's built-in
 * tools, each declared `always_ask`, so the harness asks the session's
 * permission prompt before every call, whatever allow rules, `allowedTools`
 * or permission mode say.
 */
export function toolServer(tools: readonly ClaudeSdkTool[], builtIns: readonly BuiltInToolDefinition[]): McpSdkServerConfigWithInstance {
  const served = [...tools, ...builtIns.map(builtInSdkTool)];
  const server = createSdkMcpServer({ name: claudeToolServerName, tools: served as SdkMcpToolDefinition[] });
  return { ...server, tools: served.map((served) => ({ name: served.name, permission_policy: "always_ask" as const })) };
}

/**
 * A tool's own approval in this adapter (the SDK's tools carry none): a
 * flag, or a function of the call's input that `RunModel` evaluates for
 * each call.
 */
export type ClaudeToolApproval = boolean | ((input: Record<string, unknown>) => boolean | PromiseLike<boolean>);

/** The effect an SDK MCP tool's annotations give: `readOnlyHint` a `read`, `idempotentHint` an `idempotent_write`, as for any MCP tool. */
function effectOfAnnotations(sdkTool: ClaudeSdkTool | undefined): FrameworkToolPolicy {
  const annotations = sdkTool?.annotations;
  if (annotations?.readOnlyHint === true) return { effect: "read" };
  if (annotations?.idempotentHint === true) return { effect: "idempotent_write" };
  return {};
}

/**
 * What the tool says of itself for one call: the effect of its annotations
 * and its approval, a function evaluated on the call's input. A function
 * that throws, or input that is not an object, asks for approval.
 */
export async function frameworkPolicyOf(sdkTool: ClaudeSdkTool | undefined, approval: ClaudeToolApproval | undefined, input: unknown): Promise<FrameworkToolPolicy> {
  const policy = effectOfAnnotations(sdkTool);
  if (approval === undefined) return policy;
  if (typeof approval === "boolean") return { ...policy, requiresApproval: approval };
  if (typeof input !== "object" || input === null || Array.isArray(input)) return { ...policy, requiresApproval: true };
  try {
    return { ...policy, requiresApproval: (await approval(input as Record<string, unknown>)) === true };
  } catch (error) {
    console.warn(`perdure agents-claude-agent-sdk: the needsApproval function of ${sdkTool?.name ?? "a tool"} threw, so the call asks for approval:`, error);
    return { ...policy, requiresApproval: true };
  }
}

/** What the tool says of itself before any call, or undefined when an approval function decides per call. */
export function frameworkPolicyBeforeCalls(sdkTool: ClaudeSdkTool | undefined, approval: ClaudeToolApproval | undefined): FrameworkToolPolicy | undefined {
  if (typeof approval === "function") return undefined;
  return { ...effectOfAnnotations(sdkTool), ...(approval === undefined ? {} : { requiresApproval: approval }) };
}

/** An MCP `CallToolResult` as the text the session records: text blocks joined, others as JSON; `isError` fails the call. */
function resultText(result: { content?: readonly { type: string; text?: string | undefined }[] | undefined; isError?: boolean | undefined }): string {
  const text = (result.content ?? []).map((block) => (block.type === "text" ? block.text ?? "" : JSON.stringify(block))).join("\n");
  if (result.isError === true) throw new ToolExecutionError(text);
  return text;
}

/**
 * Runs a deferred call's handler in the tool Step, inside
 * `currentToolExecution()`. The arguments are checked with the
 * tool's zod shape first, as the harness would; a mismatch fails the call
 * with zod's message.
 */
export async function executeSdkTool(sdkTool: ClaudeSdkTool, call: DeferredToolExecution): Promise<string> {
  const parsed = z.object(sdkTool.inputSchema as z.ZodRawShape).safeParse(JSON.parse(call.toolCall.arguments === "" ? "{}" : call.toolCall.arguments));
  if (!parsed.success) throw new ToolExecutionError(`the arguments of ${sdkTool.name} do not match its schema: ${parsed.error.message}`);
  const handler = sdkTool.handler as (args: unknown, extra: unknown) => ReturnType<SdkMcpToolDefinition["handler"]>;
  // The session runs this inside the call's tool-execution scope, so the handler reads it with currentToolExecution().
  const result = await handler(parsed.data, { signal: call.cancellationSignal });
  return resultText(result);
}
