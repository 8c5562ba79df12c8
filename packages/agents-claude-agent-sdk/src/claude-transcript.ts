/**
 * The Claude Code transcript as session messages, and back. The harness
 * writes its session as transcript entries (one JSON object per line of its
 * JSONL file, mirrored to a `SessionStore`); every entry of a run is stored,
 * unchanged and in order, in the `frameworkItem` of one session message, so
 * the next `RunModel` gives the harness the whole transcript to resume.
 */
import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import type { AgentMessage, FrameworkMessage } from "@perdure/agents";

/** The `frameworkItem` of a message the harness wrote. */
export interface ClaudeTranscriptItem {
  kind: "claude_code_transcript";
  entries: SessionStoreEntry[];
}

/** The `frameworkItem` of a user's message: the prompt of the run that starts the turn. */
export interface ClaudePromptItem {
  kind: "claude_code_prompt";
  text: string;
}

interface ContentBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
}

/** A tool call of the model, as a `tool_use` block of an assistant entry. */
export interface TranscriptToolUse {
  id: string;
  name: string;
  input: unknown;
}

function blocksOf(entry: SessionStoreEntry): ContentBlock[] {
  const message = entry.message as { content?: unknown } | undefined;
  return Array.isArray(message?.content) ? (message.content as ContentBlock[]) : [];
}

function isMainChain(entry: SessionStoreEntry): boolean {
  return entry.isSidechain !== true;
}

function isAssistantEntry(entry: SessionStoreEntry): boolean {
  return entry.type === "assistant" && isMainChain(entry);
}

/** The API response an assistant entry belongs to; the harness writes one entry per content block. */
export function responseIdOf(entry: SessionStoreEntry): string | undefined {
  const id = (entry.message as { id?: unknown } | undefined)?.id;
  return typeof id === "string" ? id : undefined;
}

function toolResultsOf(entry: SessionStoreEntry): ContentBlock[] {
  if (entry.type !== "user" || !isMainChain(entry)) return [];
  return blocksOf(entry).filter((block) => block.type === "tool_result");
}

/** The `tool_use` blocks of assistant entries. */
export function toolUsesOf(entries: readonly SessionStoreEntry[]): TranscriptToolUse[] {
  return entries.filter(isAssistantEntry).flatMap((entry) => blocksOf(entry).flatMap((block) =>
    block.type === "tool_use" && block.id !== undefined && block.name !== undefined ? [{ id: block.id, name: block.name, input: block.input ?? {} }] : []));
}

/** The text a tool result carries, as the model reads it. */
export function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return JSON.stringify(content ?? "");
  return (content as ContentBlock[]).map((block) => (block.type === "text" ? block.text ?? "" : JSON.stringify(block))).join("\n");
}

function isTranscriptItem(value: unknown): value is ClaudeTranscriptItem {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "claude_code_transcript" && Array.isArray((value as { entries?: unknown }).entries);
}

/** Every transcript entry of the stored messages, in order. Messages without entries (a user's prompt, a note) add none. */
export function transcriptOf(messages: readonly AgentMessage[]): SessionStoreEntry[] {
  return messages.flatMap((message) => (isTranscriptItem(message.frameworkItem) ? message.frameworkItem.entries : []));
}

/** The session message of a user's text; the harness gets the text as the run's prompt. */
export function promptMessage(text: string): FrameworkMessage {
  return { role: "user", text, frameworkItem: { kind: "claude_code_prompt", text } satisfies ClaudePromptItem };
}

/**
 * Splits a run's new transcript entries into session messages: one
 * assistant message per model response (its entries grouped by response),
 * one tool message per tool result, and every other entry (the prompt the
 * harness echoes, attachments, bookkeeping) stored with the message that
 * follows it, or the last one. `toolNameOf` maps a `tool_use` ID to the
 * name the session knows the tool by.
 */
export function messagesOfEntries(entries: readonly SessionStoreEntry[], toolNameOf: (toolUseId: string) => string): FrameworkMessage[] {
  const messages: { message: FrameworkMessage; entries: SessionStoreEntry[]; responseId?: string | undefined }[] = [];
  let pending: SessionStoreEntry[] = [];
  for (const entry of entries) {
    const results = toolResultsOf(entry);
    if (isAssistantEntry(entry)) {
      const responseId = responseIdOf(entry);
      const text = blocksOf(entry).filter((block) => block.type === "text").map((block) => block.text ?? "").join("");
      const current = messages.at(-1);
      if (current !== undefined && current.message.role === "assistant" && responseId !== undefined && current.responseId === responseId) {
        current.entries.push(...pending, entry);
        current.message.text += text;
      } else {
        messages.push({ message: { role: "assistant", text, frameworkItem: null }, entries: [...pending, entry], responseId });
      }
      pending = [];
    } else if (results.length > 0) {
      results.forEach((result, index) => {
        const toolCallId = result.tool_use_id ?? "";
        messages.push({
          message: { role: "tool", text: toolResultText(result.content), toolCallId, toolName: toolNameOf(toolCallId), frameworkItem: null },
          entries: index === 0 ? [...pending, entry] : [],
        });
      });
      pending = [];
    } else {
      pending.push(entry);
    }
  }
  const last = messages.at(-1);
  if (last === undefined) {
    if (pending.length === 0) return [];
    messages.push({ message: { role: "assistant", text: "", frameworkItem: null }, entries: pending });
  } else {
    last.entries.push(...pending);
  }
  return messages.map(({ message, entries: messageEntries }) => ({ ...message, frameworkItem: { kind: "claude_code_transcript", entries: messageEntries } satisfies ClaudeTranscriptItem }));
}

/** Where a run that stopped for deferred calls is cut, and which calls the tool Steps run. */
export interface DeferralCut {
  /** The run's entries through the model response that made the calls; the harness's denial and what followed are dropped. */
  kept: SessionStoreEntry[];
  /** The response's calls without a result in `kept`, in the order the model made them. */
  deferred: TranscriptToolUse[];
  /** The UUID of the last kept entry: the next run resumes there (`resumeSessionAt`). */
  resumeAt: string;
}

/**
 * Cuts a run's new entries after the model response that holds
 * `firstDeferredToolUseId`. Calls of that response that the harness already
 * answered in the kept entries (a read it ran) keep their results; every
 * other call of the response is deferred.
 */
export function cutAtDeferral(entries: readonly SessionStoreEntry[], firstDeferredToolUseId: string): DeferralCut {
  const callIndex = entries.findIndex((entry) => isAssistantEntry(entry) && blocksOf(entry).some((block) => block.type === "tool_use" && block.id === firstDeferredToolUseId));
  if (callIndex === -1) throw new Error(`the Claude Code transcript has no tool_use ${firstDeferredToolUseId}; the harness stopped before writing it`);
  const responseId = responseIdOf(entries[callIndex]!);
  let lastIndex = callIndex;
  entries.forEach((entry, index) => {
    if (index > callIndex && isAssistantEntry(entry) && responseId !== undefined && responseIdOf(entry) === responseId) lastIndex = index;
  });
  const kept = entries.slice(0, lastIndex + 1);
  const answered = new Set(kept.flatMap((entry) => toolResultsOf(entry).map((result) => result.tool_use_id)));
  const responseEntries = kept.filter((entry) => isAssistantEntry(entry) && responseIdOf(entry) === responseId);
  const deferred = toolUsesOf(responseEntries).filter((toolUse) => !answered.has(toolUse.id));
  const resumeAt = kept.at(-1)?.uuid;
  if (resumeAt === undefined) throw new Error("the Claude Code transcript entry of the deferred call has no uuid to resume at");
  return { kept, deferred, resumeAt };
}

/** Sums the usage of each model response of the entries, once per response. */
export function usageOfEntries(entries: readonly SessionStoreEntry[]): { inputTokens: number; outputTokens: number; cachedInputTokens: number; responses: number; lastResponseId: string | undefined; model: string | undefined } {
  const seen = new Set<string>();
  let inputTokens = 0;
  let outputTokens = 0;
  let cachedInputTokens = 0;
  let model: string | undefined;
  let lastResponseId: string | undefined;
  for (const entry of entries.filter(isAssistantEntry)) {
    const responseId = responseIdOf(entry);
    if (responseId === undefined || seen.has(responseId)) continue;
    seen.add(responseId);
    lastResponseId = responseId;
    const message = entry.message as { model?: unknown; usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number } };
    if (typeof message.model === "string") model = message.model;
    inputTokens += message.usage?.input_tokens ?? 0;
    outputTokens += message.usage?.output_tokens ?? 0;
    cachedInputTokens += message.usage?.cache_read_input_tokens ?? 0;
  }
  return { inputTokens, outputTokens, cachedInputTokens, responses: seen.size, lastResponseId, model };
}
