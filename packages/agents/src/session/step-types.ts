/** The session's Step type names, as the contract spells them. */
export const AgentStepType = {
  StartAgentSession: "StartAgentSession",
  AwaitUserMessage: "AwaitUserMessage",
  RunModel: "RunModel",
  CompactContext: "CompactContext",
  AwaitToolApproval: "AwaitToolApproval",
  AwaitQuestionAnswer: "AwaitQuestionAnswer",
  AwaitTimer: "AwaitTimer",
  CallTool: "CallTool",
  CallSingleAttemptTool: "CallSingleAttemptTool",
  RecordToolFailure: "RecordToolFailure",
  RecordToolOutcomeUnknown: "RecordToolOutcomeUnknown",
  ResumeTurn: "ResumeTurn",
  RecordTurnFailure: "RecordTurnFailure",
  PollToolTask: "PollToolTask",
  ApplyTurnControl: "ApplyTurnControl",
  FinishTurnCancellation: "FinishTurnCancellation",
  CancelToolTask: "CancelToolTask",
  /** Waits for one scheduled turn's next run (a Perdure extension). */
  AwaitScheduledTurn: "AwaitScheduledTurn",
  /** Stores the schedule of the agent's `schedule_turn` call (a Perdure extension). */
  ScheduleTurnCall: "ScheduleTurnCall",
  /** Wakes the parent session of a sub-agent session when its turn ends (a Perdure extension). */
  NotifyParentSession: "NotifyParentSession",
} as const;
export type AgentStepType = (typeof AgentStepType)[keyof typeof AgentStepType];
