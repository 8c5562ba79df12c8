/**
 * The Claude Agent SDK options that could let a call skip its tool Step or
 * its approval are refused when the flow is built, each by name, and the
 * config folders killed Workers leave behind are removed.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tool, type Options } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { describeAgentSessionModel } from "@perdure/agents";
import { createClaudeConfigFolder, removeStaleClaudeConfigFolders } from "./claude-config-folders.ts";
import { ClaudeQueryOptionRefusedError } from "./claude-query-option-refused-error.ts";
import { createClaudeAgentSdkSessionFlow } from "./create-claude-agent-sdk-session-flow.ts";

const lookupOrder = tool("lookup_order", "Look up an order.", { order_id: z.string() }, async () => ({ content: [] }), { annotations: { readOnlyHint: true } });
const refundOrder = tool("refund_order", "Refund an order.", { order_id: z.string() }, async () => ({ content: [] }));
const agent = { tools: [lookupOrder, refundOrder] };

function refusalOf(queryOptions: Options, toolPolicies = {}): ClaudeQueryOptionRefusedError | undefined {
  try {
    createClaudeAgentSdkSessionFlow(agent, "RefusedOptions", { queryOptions, toolPolicies });
    return undefined;
  } catch (error) {
    assert.ok(ClaudeQueryOptionRefusedError.isInstance(error), `a ClaudeQueryOptionRefusedError, not ${String(error)}`);
    return error;
  }
}

describe("Claude query options", () => {
  it("refuses every option that answers the permission prompt instead of the session, naming it", () => {
    const cases: [Options, string][] = [
      [{ allowedTools: ["mcp__perdure__refund_order"] }, "allowedTools"],
      [{ allowedTools: ["mcp__perdure__*"] }, "allowedTools"],
      [{ allowedTools: ["Bash(npm test:*)"] }, "allowedTools"],
      [{ canUseTool: async () => ({ behavior: "allow" }) }, "canUseTool"],
      [{ permissionMode: "bypassPermissions" }, "permissionMode"],
      [{ permissionMode: "acceptEdits" }, "permissionMode"],
      [{ allowDangerouslySkipPermissions: true }, "allowDangerouslySkipPermissions"],
      [{ permissionPromptToolName: "mcp__perdure__lookup_order" }, "permissionPromptToolName"],
      [{ hooks: { PermissionRequest: [{ hooks: [async () => ({})] }] } }, "hooks.PermissionRequest"],
      [{ hooks: { PreToolUse: [{ hooks: [async () => ({})] }] } }, "hooks.PreToolUse"],
    ];
    for (const [queryOptions, option] of cases) {
      const refusal = refusalOf(queryOptions, { refund_order: { effect: "non_idempotent_write" } });
      assert.equal(refusal?.option, option, JSON.stringify(Object.keys(queryOptions)));
      assert.match(refusal.message, new RegExp(`^queryOptions\\.${option.replace(".", "\\.")} is refused: `));
    }
  });

  it("allows reads without approval in allowedTools, and the harmless options", () => {
    assert.equal(refusalOf({ allowedTools: ["mcp__perdure__lookup_order"], permissionMode: "default", hooks: { PostToolUse: [{ hooks: [async () => ({})] }] } }), undefined);
    // A read that the session's policy makes ask is not a plain read any more.
    assert.equal(refusalOf({ allowedTools: ["mcp__perdure__lookup_order"] }, { lookup_order: { effect: "read", requiresApproval: true } })?.option, "allowedTools");
    // A policy that makes the write a read lets it run in the harness, as the user said.
    assert.equal(refusalOf({ allowedTools: ["mcp__perdure__refund_order"] }, { refund_order: { effect: "read" } }), undefined);
  });
});

describe("Claude model description", () => {
  it("names queryOptions.model for perdure dev's banner", () => {
    assert.equal(describeAgentSessionModel(createClaudeAgentSdkSessionFlow(agent, "ClaudeNamedModel", { queryOptions: { model: "claude-sonnet-5-5" } })), "anthropic claude-sonnet-5-5");
  });
});

describe("Claude config folders", () => {
  it("are private to their owner, and the first run of a process removes the folders of ended processes", async () => {
    const folder = await createClaudeConfigFolder();
    try {
      assert.equal(statSync(folder).mode & 0o777, 0o700);
      assert.match(folder, new RegExp(`perdure-claude-code-${process.pid}-`));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    const parent = mkdtempSync(join(tmpdir(), "perdure-claude-parent-"));
    try {
      const ended = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
      const endedPid = Number(ended.stdout);
      mkdirSync(join(parent, `perdure-claude-code-${endedPid}-abc`));
      writeFileSync(join(parent, `perdure-claude-code-${endedPid}-abc`, "transcript.jsonl"), "{}");
      mkdirSync(join(parent, `perdure-claude-code-${process.pid}-def`));
      mkdirSync(join(parent, "someone-else"));
      assert.deepEqual(await removeStaleClaudeConfigFolders(parent), [`perdure-claude-code-${endedPid}-abc`]);
      assert.deepEqual(readdirSync(parent).sort(), [`perdure-claude-code-${process.pid}-def`, "someone-else"]);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
