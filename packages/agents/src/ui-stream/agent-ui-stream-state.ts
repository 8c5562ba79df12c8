/**
 * What the UI stream knows about the parts it already sent for one turn. A
 * resume token carries it, so a stream that continues after a token sends
 * exactly the parts that follow, as the first stream would have.
 */
import type { ShownToolTask } from "./tool-task-data-parts.ts";

/** An event that ends a turn once its commit is confirmed. */
export type AgentTurnEndEventType = "turn_completed" | "turn_failed" | "turn_steered" | "turn_cancelled";

/** The `RunModel` Step execution and attempt whose parts the current step holds. */
export interface AgentUIStreamStep {
  executionId: string;
  attempt: number;
}

/** The translation state after some parts of a turn. Plain JSON. */
export interface AgentUIStreamState {
  /** The `start` part was sent. */
  started: boolean;
  /** The final `finish` part was sent; nothing follows. */
  done: boolean;
  /** Some of the turn's events never reached this stream (trimmed or lost). */
  eventsLost: boolean;
  /** The last turn-ending event seen, which ends the stream once the turn's end commits. */
  turnEnd: { type: AgentTurnEndEventType; error: string | null } | null;
  /** The current `RunModel` step, or null before the first. */
  step: AgentUIStreamStep | null;
  /** A `start-step` was sent without its `finish-step`. */
  stepOpen: boolean;
  /** The open text part, or null. */
  textPartId: string | null;
  /** The open reasoning part, or null. */
  reasoningPartId: string | null;
  /** Numbers the next text or reasoning part. */
  nextPartNumber: number;
  /** Tool Step executions of the current model response; their text is tool output, not the model's. */
  toolStepExecutionIds: string[];
  /** Tool calls of the current model response that have a tool part. */
  shownToolCallIds: string[];
  /** Approvals of the current model response that have a `tool-approval-request`. */
  shownApprovalIds: string[];
  /** Questions of the current model response that have a `data-agent-question` part. */
  shownQuestionIds: string[];
  /** Tool tasks of the current model response that have a `data-agent-tool-task` part, with the status sent last. */
  shownTasks: ShownToolTask[];
  /**
   * The `CompactContext` execution of the latest `compaction_started`: its
   * `usage_recorded` is event data outside the assistant message's steps.
   * Absent in tokens written before compaction had parts.
   * @default null
   */
  compactionStepExecutionId?: string | null;
}

/** The state before a turn's first part. */
export function initialAgentUIStreamState(): AgentUIStreamState {
  return {
    started: false,
    done: false,
    eventsLost: false,
    turnEnd: null,
    step: null,
    stepOpen: false,
    textPartId: null,
    reasoningPartId: null,
    nextPartNumber: 0,
    toolStepExecutionIds: [],
    shownToolCallIds: [],
    shownApprovalIds: [],
    shownQuestionIds: [],
    shownTasks: [],
  };
}

/** A deep copy, so a translation never changes the state it started from. */
export function copyAgentUIStreamState(state: AgentUIStreamState): AgentUIStreamState {
  return {
    ...state,
    turnEnd: state.turnEnd === null ? null : { ...state.turnEnd },
    step: state.step === null ? null : { ...state.step },
    toolStepExecutionIds: [...state.toolStepExecutionIds],
    shownToolCallIds: [...state.shownToolCallIds],
    shownApprovalIds: [...state.shownApprovalIds],
    shownQuestionIds: [...state.shownQuestionIds],
    shownTasks: state.shownTasks.map((task) => ({ ...task })),
  };
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((entry) => typeof entry === "string");
}

const taskStatuses: readonly string[] = ["running", "awaiting_answer", "succeeded", "failed", "rejected", "outcome_unknown"];

function isShownTaskArray(value: unknown): value is ShownToolTask[] {
  return Array.isArray(value) && value.every((entry) => typeof entry === "object" && entry !== null
    && typeof (entry as ShownToolTask).toolCallId === "string" && typeof (entry as ShownToolTask).toolName === "string"
    && typeof (entry as ShownToolTask).taskId === "string" && taskStatuses.includes(String((entry as ShownToolTask).status)));
}

function isNullableString(value: unknown): value is string | null {
  return value === null || typeof value === "string";
}

const turnEndTypes: readonly string[] = ["turn_completed", "turn_failed", "turn_steered", "turn_cancelled"];

/** Reads a state from decoded token JSON; undefined when it is not one this version wrote. */
export function parseAgentUIStreamState(value: unknown): AgentUIStreamState | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const state = value as Record<string, unknown>;
  const turnEnd = state.turnEnd as Record<string, unknown> | null | undefined;
  const step = state.step as Record<string, unknown> | null | undefined;
  const valid = typeof state.started === "boolean" && typeof state.done === "boolean" && typeof state.eventsLost === "boolean"
    && (turnEnd === null || (typeof turnEnd === "object" && turnEndTypes.includes(String(turnEnd.type)) && isNullableString(turnEnd.error)))
    && (step === null || (typeof step === "object" && typeof step.executionId === "string" && typeof step.attempt === "number"))
    && typeof state.stepOpen === "boolean" && isNullableString(state.textPartId) && isNullableString(state.reasoningPartId)
    && typeof state.nextPartNumber === "number" && isStringArray(state.toolStepExecutionIds)
    && isStringArray(state.shownToolCallIds) && isStringArray(state.shownApprovalIds)
    && (state.shownQuestionIds === undefined || isStringArray(state.shownQuestionIds))
    && (state.shownTasks === undefined || isShownTaskArray(state.shownTasks))
    && (state.compactionStepExecutionId === undefined || isNullableString(state.compactionStepExecutionId));
  // Tokens written before questions or tasks had parts carry no shownQuestionIds or shownTasks: none was shown.
  return valid
    ? copyAgentUIStreamState({
      ...(value as AgentUIStreamState),
      shownQuestionIds: (state.shownQuestionIds as string[] | undefined) ?? [],
      shownTasks: (state.shownTasks as ShownToolTask[] | undefined) ?? [],
    })
    : undefined;
}
