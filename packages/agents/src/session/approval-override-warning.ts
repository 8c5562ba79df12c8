/**
 * The one log line of an approval override: a session policy whose
 * `requiresApproval: false` turns off an approval the framework asks for.
 * Said once per session Flow type and tool, so that a turned-off approval is
 * never silent and never floods the log.
 */
import { approvalOverrideOf, type FrameworkToolPolicy, type ToolEffect } from "../contract/values/tool-effect.ts";
import type { SessionEnvironment } from "./session-environment.ts";

const warnedTools = new WeakMap<SessionEnvironment, Set<string>>();

/** The text of the override's log line. */
export function approvalOverrideWarning(toolName: string): string {
  return `perdure agents: toolPolicies.${toolName}.requiresApproval is false, so calls of ${toolName} run without the approval its framework asks for`;
}

/** Logs the override of `toolName` the first time a model call of this Flow type meets it. */
export function warnOfApprovalOverride(environment: SessionEnvironment, toolName: string, framework: ToolEffect | FrameworkToolPolicy | undefined): void {
  if (!approvalOverrideOf(toolName, environment.options.toolPolicies, framework)) return;
  const warned = warnedTools.get(environment) ?? new Set<string>();
  warnedTools.set(environment, warned);
  if (warned.has(toolName)) return;
  warned.add(toolName);
  console.warn(approvalOverrideWarning(toolName));
}
