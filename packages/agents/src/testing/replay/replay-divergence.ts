/** What a replay reports when today's agent code parts from the recording. */

/** The first place a replay parted from its recording. */
export interface ReplayDivergence {
  turnId: string;
  /** The model call of the turn (1 for its first) at or after which it parted. */
  modelCall: number;
  /** The session Step where it showed: `RunModel` for a model call, `CallTool` for a tool call. */
  step: "RunModel" | "CallTool";
  /**
   * `model_request`: the agent sent the model something else; `model_call_count`:
   * it made more or fewer model calls in the turn; `tool_call`: a tool call
   * differs (name, arguments or effect class) or is not in the recording.
   */
  kind: "model_request" | "model_call_count" | "tool_call";
  /** A readable account: where, then each differing path with the recorded and the current value. */
  diff: string;
}

/** What `replaySession` returns. */
export interface ReplayReport {
  /** The recorded session's ID. */
  sessionId: string;
  /** Turns replayed to their end. */
  turns: number;
  /** Model calls answered from the recording. */
  modelCalls: number;
  /** Tool calls that ran for real (effect `read`), by ID. */
  toolCallsRun: string[];
  /** Tool calls answered from the recording (every other effect), by ID. */
  toolCallsFromRecording: string[];
  /** The first divergence, or null when today's code did what the recording says. */
  divergence: ReplayDivergence | null;
}
