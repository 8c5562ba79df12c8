// The data parts of @perdure/agents/ui-stream that the chat renders
// (docs/decisions/2026-12-03-questions-and-plans-in-ui-streams.md), read
// from a UIMessage's parts, and the wire shape of the session's plan. The
// parts' shapes are the server's own (@perdure/agents/contract/ui-stream),
// under the shorter names the components use.
import type {
  AgentMcpToolProgressData as McpToolProgressData,
  AgentPlanData as PlanPartData,
  AgentPlanWire as WirePlan,
  AgentQuestionData as QuestionData,
  AgentQuestionResolutionData as QuestionResolutionData,
  AgentQuestionResponseData as QuestionResponse,
  AgentTimerData as TimerData,
  AgentToolTaskData as ToolTaskData,
  AgentTurnControlData as TurnControlData,
} from "@perdure/agents/contract/ui-stream";
import type { AgentPlanTaskStatus as PlanTaskStatus } from "@perdure/agents/contract";
import type { UIMessage } from "ai";

export type { McpToolProgressData, PlanPartData, PlanTaskStatus, QuestionData, QuestionResolutionData, QuestionResponse, TimerData, ToolTaskData, TurnControlData, WirePlan };

type Part = UIMessage["parts"][number];


function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The data of a part of `type`, or undefined for another part. */
function dataOf<TData>(part: Part, type: string, check: (data: Record<string, unknown>) => boolean): TData | undefined {
  if (part.type !== type || !("data" in part) || !isObject(part.data) || !check(part.data)) return undefined;
  return part.data as TData;
}

export function questionOf(part: Part): QuestionData | undefined {
  return dataOf<QuestionData>(part, "data-agent-question", (data) => typeof data.interruptId === "string" && typeof data.question === "string" && Array.isArray(data.choices));
}

export function questionResolutionOf(part: Part): QuestionResolutionData | undefined {
  return dataOf<QuestionResolutionData>(part, "data-agent-question-resolution", (data) => typeof data.interruptId === "string" && typeof data.resolution === "string");
}

export function timerOf(part: Part): TimerData | undefined {
  return dataOf<TimerData>(part, "data-agent-timer", (data) => typeof data.toolCallId === "string" && typeof data.waitUntil === "string");
}

export function planPartOf(part: Part): PlanPartData | undefined {
  return dataOf<PlanPartData>(part, "data-agent-plan", (data) => typeof data.revision === "number" && typeof data.status === "string");
}

/** The snapshot's plan, when it is one. */
export function wirePlanOf(value: unknown): WirePlan | null {
  if (!isObject(value) || typeof value.revision !== "number" || typeof value.status !== "string" || !Array.isArray(value.tasks)) return null;
  return value as unknown as WirePlan;
}

/** The messages with `response` set on the question part `interruptId` (and its refusal cleared). */
export function withQuestionResponse(messages: UIMessage[], interruptId: string, response: QuestionResponse): UIMessage[] {
  return messages.map((message) => {
    if (!message.parts.some((part) => questionOf(part)?.interruptId === interruptId)) return message;
    return {
      ...message,
      parts: message.parts.map((part) => {
        const question = questionOf(part);
        if (question?.interruptId !== interruptId) return part;
        const data: QuestionData = { ...question, response };
        delete data.error;
        return { ...part, data } as Part;
      }),
    };
  });
}

/** The answer text of a finished `ask_user` call's output `{"status":"answered","answer":…}`, if it is one. */
export function askUserAnswerOf(output: unknown): string | undefined {
  let value: unknown = output;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return isObject(value) && value.status === "answered" && typeof value.answer === "string" ? value.answer : undefined;
}

export function toolTaskOf(part: Part): ToolTaskData | undefined {
  return dataOf<ToolTaskData>(part, "data-agent-tool-task", (data) => typeof data.toolCallId === "string" && typeof data.taskId === "string" && typeof data.status === "string");
}

export function turnControlOf(part: Part | { type: string; data?: unknown }): TurnControlData | undefined {
  return dataOf<TurnControlData>(part as Part, "data-agent-turn-control", (data) => typeof data.turnId === "string" && (data.outcome === "steered" || data.outcome === "cancelled"));
}

export function mcpToolProgressOf(part: Part): McpToolProgressData | undefined {
  return dataOf<McpToolProgressData>(part, "data-agent-mcp-tool-progress", (data) => typeof data.toolCallId === "string" && typeof data.progress === "number");
}

/**
 * A progress line: "2 of 3 · indexing" with a total, "40 · indexing"
 * without one, "attempt 2 · 1 of 3" for a call retried after a crash (its
 * progress starts again, so the reader sees why the number went back).
 */
export function describeMcpToolProgress(progress: McpToolProgressData): string {
  const amount = progress.total === null ? String(progress.progress) : `${progress.progress} of ${progress.total}`;
  const attempt = progress.attempt > 1 ? `attempt ${progress.attempt} · ` : "";
  return attempt + (progress.message === null || progress.message === "" ? amount : `${amount} · ${progress.message}`);
}

/**
 * The progress to show for each call of a message: the latest part of the
 * latest attempt. A part of an older attempt that comes after a newer one's
 * (a replay out of order) does not move the bar back.
 */
export function latestMcpToolProgress(parts: readonly Part[]): Map<string, McpToolProgressData> {
  const latest = new Map<string, McpToolProgressData>();
  for (const part of parts) {
    const progress = mcpToolProgressOf(part);
    if (progress === undefined) continue;
    const shown = latest.get(progress.toolCallId);
    if (shown === undefined || progress.attempt >= shown.attempt) latest.set(progress.toolCallId, progress);
  }
  return latest;
}
