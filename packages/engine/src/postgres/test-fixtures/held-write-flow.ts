/**
 * The Flow of the held-commit outage test: a write that must not run twice
 * (one attempt, then a recovery route, as a session's single-attempt tool).
 * Its handler waits for the test process to let it return; the sweeping
 * Worker processes host the Flow but never get to run the handler.
 */
import { attribute, completeFlow, defineFlow, defineStep, type RecoveryError } from "../../index.ts";

/** The recovery error the failure route saw, if it ran. */
export const heldWriteRecovered = attribute<RecoveryError>("Recovered");

/** How the test process follows and releases the handler. */
export const heldWriteHandler = {
  runs: 0,
  started: (): void => undefined,
  release: Promise.resolve(),
};

const Write = defineStep<null>("Write", {
  executeOptions: { retry: { maximumAttempts: 1 } },
  failureRoute: "Recover",
  execute: async () => {
    heldWriteHandler.runs += 1;
    heldWriteHandler.started();
    await heldWriteHandler.release;
    return completeFlow({ written: true });
  },
});

const Recover = defineStep<null>("Recover", {
  execute: (context) => {
    if (context.recoveryError !== undefined) context.write(heldWriteRecovered, context.recoveryError);
    return completeFlow({ written: "unknown" });
  },
});

export const heldWriteFlow = defineFlow({ type: "HeldWrite", start: "Write", steps: [Write, Recover], persistence: { heldWriteRecovered } });
