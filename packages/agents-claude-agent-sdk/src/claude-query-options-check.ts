/**
 * The Claude Agent SDK options that could run a call outside its tool Step
 * or skip its approval, refused by name: the session alone answers the
 * harness's permission prompt. Checked when the flow is built (for options
 * given as an object) and again before every run (for options a function
 * makes).
 */
import type { Options } from "@anthropic-ai/claude-agent-sdk";
import type { ResolvedToolPolicy } from "@perdure/agents";
import { ClaudeQueryOptionRefusedError } from "./claude-query-option-refused-error.ts";
import { claudeToolServerName, sessionToolName } from "./claude-tools.ts";

/** Every hook event whose answer can allow a tool call without the session's permission prompt. */
const permissionHookEvents = ["PermissionRequest", "PreToolUse"] as const;

/** The session's name of the tool an `allowedTools` rule names (`Bash(npm test:*)` names `Bash`), or every tool of the server for `mcp__perdure` and `mcp__perdure__*`. */
function toolNamesOfRule(rule: string, serverToolNames: readonly string[]): string[] {
  const bare = rule.replace(/\(.*$/s, "");
  if (bare === `mcp__${claudeToolServerName}` || bare === `mcp__${claudeToolServerName}__*`) return [...serverToolNames];
  return [sessionToolName(bare)];
}

/**
 * Refuses what would bypass the session's answer to the permission prompt.
 * `policyOf` gives the policy a tool's calls run under when it is known up
 * front, or undefined when an approval function decides per call.
 */
export function checkClaudeQueryOptions(options: Options, serverToolNames: readonly string[], policyOf: (toolName: string) => ResolvedToolPolicy | undefined): void {
  if (options.canUseTool !== undefined) {
    throw new ClaudeQueryOptionRefusedError("canUseTool", "the session answers the harness's permission prompt, so that every call that is not a read runs in its own tool Step after its approval; give approvals through toolPolicies or the agent's needsApproval");
  }
  if (options.permissionMode !== undefined && options.permissionMode !== "default") {
    throw new ClaudeQueryOptionRefusedError("permissionMode", `mode ${JSON.stringify(options.permissionMode)} lets the harness allow or deny calls without asking the session; leave it out`);
  }
  if (options.allowDangerouslySkipPermissions === true) {
    throw new ClaudeQueryOptionRefusedError("allowDangerouslySkipPermissions", "skipping permission checks would run writes inside the harness, outside their tool Steps; leave it out");
  }
  if (options.permissionPromptToolName !== undefined) {
    throw new ClaudeQueryOptionRefusedError("permissionPromptToolName", "the session answers the harness's permission prompt itself; leave it out");
  }
  for (const event of permissionHookEvents) {
    if ((options.hooks?.[event]?.length ?? 0) > 0) {
      throw new ClaudeQueryOptionRefusedError(`hooks.${event}`, `a ${event} hook can allow a call without the session's permission prompt; leave it out`);
    }
  }
  for (const rule of options.allowedTools ?? []) {
    for (const toolName of toolNamesOfRule(rule, serverToolNames)) {
      const policy = policyOf(toolName);
      if (policy === undefined || policy.effect !== "read" || policy.requiresApproval) {
        const runsAs = policy === undefined ? "an approval function decides its calls" : `its policy is ${policy.effect}${policy.requiresApproval ? " with approval" : ""}`;
        throw new ClaudeQueryOptionRefusedError("allowedTools", `${JSON.stringify(rule)} would let ${toolName} run inside the harness without the session's permission prompt, but ${runsAs}; only reads without approval may be listed`);
      }
    }
  }
}
