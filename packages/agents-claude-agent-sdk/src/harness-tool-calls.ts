/**
 * The tool calls the Claude Code harness runs itself, in `RunModel` (reads
 * without approval, and Claude Code's own tools the session allows), as
 * live events: `harness.tool_call_started` with the input when the harness
 * may run the call, `harness.tool_call_finished` with the result text when
 * it answers. The UI stream shows them as tool parts, as it shows calls
 * that run in their own tool Steps. Calls deferred to the session get no
 * such events: their tool Steps write theirs.
 */
import type { PermissionResult } from "@anthropic-ai/claude-agent-sdk";
import type { AgentEventWriter } from "@perdure/agents";
import { sessionToolName } from "./claude-tools.ts";
import { toolResultText } from "./claude-transcript.ts";

/** The most characters of a result an event carries; the stored tool message keeps the whole text. */
export const maxHarnessResultEventCharacters = 32 * 1024;

interface ToolResultBlock {
  type: string;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
}

function shortened(text: string): string {
  if (text.length <= maxHarnessResultEventCharacters) return text;
  return `${text.slice(0, maxHarnessResultEventCharacters)}… (${text.length - maxHarnessResultEventCharacters} more characters)`;
}

/** One harness run's calls: what the model asked for, what the permission prompt let run or deferred. */
export class HarnessToolCalls {
  private readonly events: AgentEventWriter;
  private readonly requests = new Map<string, { name: string; input: unknown }>();
  private readonly started = new Set<string>();
  private readonly deferredIds = new Set<string>();

  constructor(events: AgentEventWriter) {
    this.events = events;
  }

  /** A `tool_use` block of the model's response. */
  requested(toolUseId: string, harnessName: string, input: unknown): void {
    this.requests.set(toolUseId, { name: sessionToolName(harnessName), input });
  }

  /** The permission prompt lets the harness run the call: its started event, then the answer. */
  async allowed(toolUseId: string, name: string, input: unknown): Promise<PermissionResult> {
    await this.start(toolUseId, name, input);
    return { behavior: "allow" };
  }

  /** The permission prompt hands the call to the session; its tool Step reports it. */
  deferred(toolUseId: string): PermissionResult {
    this.deferredIds.add(toolUseId);
    return { behavior: "deny", message: "deferred to the session", interrupt: true };
  }

  /** The `tool_result` blocks of a user message the harness wrote: each call it answered finishes. */
  async results(content: unknown): Promise<void> {
    if (!Array.isArray(content)) return;
    for (const block of content as ToolResultBlock[]) {
      if (block.type !== "tool_result" || block.tool_use_id === undefined || this.deferredIds.has(block.tool_use_id)) continue;
      const toolUseId = block.tool_use_id;
      const request = this.requests.get(toolUseId);
      const name = request?.name ?? "";
      // A call the harness's own rules allowed, or refused, never reached the prompt: it starts here.
      await this.start(toolUseId, name, request?.input ?? null);
      await this.events.write("harness.tool_call_finished", {
        tool_call_id: toolUseId,
        tool_name: name,
        output: shortened(toolResultText(block.content)),
        is_error: block.is_error === true,
      });
    }
  }

  private async start(toolUseId: string, name: string, input: unknown): Promise<void> {
    if (this.started.has(toolUseId)) return;
    this.started.add(toolUseId);
    await this.events.write("harness.tool_call_started", { tool_call_id: toolUseId, tool_name: name, input });
  }
}
