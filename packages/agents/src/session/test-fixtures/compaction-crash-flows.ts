/**
 * A compacting Stepwise session Flow for the `CompactContext` SIGKILL test:
 * Worker child processes run it (`compaction-crash-worker-main.ts`) and the
 * test process uses the same definition to drive and read sessions. Every
 * model and summary call is recorded in an InvocationLog, and the first
 * summary call parks at a FileGate, both in the folder named by
 * `PERDURE_COMPACTION_CRASH_DIRECTORY`.
 */
import { join } from "node:path";
import { contextSummaryInstructions } from "../../stepwise/compaction/context-summary-texts.ts";
import { createStepwiseAgentSessionFlow } from "../../stepwise/create-stepwise-agent-session-flow.ts";
import { ScriptedModelClient } from "../../stepwise/scripted-model-client.ts";
import { FileGate } from "../../testing/file-gate.ts";
import { InvocationLog } from "../../testing/invocation-log.ts";

export const compactionCrashDirectoryEnvironmentVariable = "PERDURE_COMPACTION_CRASH_DIRECTORY";

/** The gate the first summary call parks at. */
export const compactionCrashGateName = "summary-call";

/** Details of a `model_call` or `summary_call` entry. */
export interface CompactionCrashCall {
  flowId: string;
  turnId: string;
  attempt: number;
  processId: number;
}

export function compactionCrashLog(directory: string): InvocationLog {
  return new InvocationLog(join(directory, "compaction-invocations.log"));
}

function crashDirectory(): string {
  const directory = process.env[compactionCrashDirectoryEnvironmentVariable];
  if (directory === undefined || directory === "") throw new Error(`set ${compactionCrashDirectoryEnvironmentVariable} to the crash test's folder`);
  return directory;
}

const filler = "The customer asked where the parcel is and when the refund for the damaged item arrives. ";

const model = new ScriptedModelClient(async (request) => {
  const directory = crashDirectory();
  const log = compactionCrashLog(directory);
  const isSummary = request.instructions === contextSummaryInstructions;
  const details: CompactionCrashCall = { flowId: request.flowId, turnId: request.turnId, attempt: request.attempt, processId: process.pid };
  if (isSummary) {
    const isFirstRun = log.count("summary_call") === 0;
    log.record("summary_call", details);
    if (isFirstRun) await new FileGate(directory, compactionCrashGateName).waitUntilOpen({ signal: request.signal });
    return { text: "The customer is waiting for a parcel and a refund." };
  }
  log.record("model_call", details);
  return { text: `Noted. ${filler}` };
});

/** Compacts after a few turns of a 1,000-token window. */
export const compactionCrashFlow = createStepwiseAgentSessionFlow(
  { name: "compaction-crash", instructions: "Answer.", model, compaction: { contextWindowTokens: 1_000 } },
  "CompactionCrash",
);

export const compactionCrashFlows = [compactionCrashFlow] as const;

/** A user message of the test's turns. */
export function compactionCrashUserText(turn: number): string {
  return `message ${turn}: ${filler}`;
}
