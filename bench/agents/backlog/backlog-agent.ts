/**
 * The backlog bench's agent as an entry module, for `perdure worker` when the
 * bench runs the real command (`--worker=cli`).
 */
import { createAgentSessionFlow } from "@perdure/agents";
import { BenchScriptedRunner, FinalAnswerSignals } from "../scripted-runner.ts";

/** The Flow type both the bench's Client and its Worker use. */
export const backlogFlowType = "BacklogAgent";

/** A new session Flow of the bench's scripted agent (a read tool, then an answer). */
export function createBacklogAgent() {
  return createAgentSessionFlow(new BenchScriptedRunner(new FinalAnswerSignals()), backlogFlowType);
}

export const backlogAgent = createBacklogAgent();
