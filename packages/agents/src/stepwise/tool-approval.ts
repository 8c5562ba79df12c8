/**
 * A function tool's own approval for one call: its flag, or its function
 * evaluated on the call's arguments in `RunModel`, before the call is
 * recorded. Arguments that are not a JSON object, and a function that
 * throws, ask for approval: a doubt never lets a call skip it.
 */
import type { ToolApprovalSetting } from "./function-tool.ts";

/** The tool's approval for a call with `argumentsText`, or undefined when the tool says nothing. */
export async function evaluateToolApproval(setting: ToolApprovalSetting | undefined, argumentsText: string, toolCallId: string): Promise<boolean | undefined> {
  if (typeof setting !== "function") return setting;
  let argumentsValue: unknown;
  try {
    argumentsValue = JSON.parse(argumentsText === "" ? "{}" : argumentsText);
  } catch {
    return true;
  }
  if (typeof argumentsValue !== "object" || argumentsValue === null || Array.isArray(argumentsValue)) return true;
  try {
    return (await setting(argumentsValue as Record<string, unknown>, { toolCallId })) === true;
  } catch (error) {
    console.warn("perdure stepwise: a tool's requiresApproval function threw, so the call asks for approval:", error);
    return true;
  }
}
