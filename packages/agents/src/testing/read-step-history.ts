import { Client, type StepHistoryEntry } from "@perdure/engine";
import { openStoreAtAddress } from "./open-store-at-address.ts";

/** One finished Step method of a Flow, as {@link readStepHistory} returns it. */
export interface StepHistoryRecord {
  stepType: string;
  method: StepHistoryEntry["method"];
  /** `completed` for a committed method, `failed` for a failed attempt (such as `WorkerLost`), `cancelled` for a cancelled execution. */
  status: StepHistoryEntry["status"];
  attempt: number;
  executionId: string;
  /** The failure, as `<Kind>: <message>`, or `null`. */
  error: string | null;
}

/**
 * The finished Step methods of a Flow, oldest first, from the engine's Step
 * history (the newest 1000 the Flow type retains), to assert a turn's Step
 * shape. Opens and closes its own store connection, so it works whichever
 * process ran the Steps.
 *
 * @example
 * const history = await readStepHistory(engine.address, "session-1");
 * assert.deepEqual(
 *   history.filter((entry) => entry.status === "completed").map((entry) => `${entry.stepType}.${entry.method}`),
 *   ["RunModel.execute", "CallTool.execute", "RunModel.execute"],
 * );
 */
export async function readStepHistory(engineAddress: string, flowId: string): Promise<StepHistoryRecord[]> {
  const store = openStoreAtAddress(engineAddress);
  try {
    const history = await new Client({ store }).getStepHistory(flowId);
    return history.map((entry) => ({
      stepType: entry.stepType,
      method: entry.method,
      status: entry.status,
      attempt: entry.attempt,
      executionId: entry.executionId,
      error: entry.error,
    }));
  } finally {
    await store.close();
  }
}
