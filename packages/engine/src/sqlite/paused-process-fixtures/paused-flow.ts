/**
 * The Flow type of the paused-process tests, shared by the test and both
 * child roles: the `paused` process (SIGSTOPped inside a transaction) and the
 * `taker` process (must take over and carry on meanwhile).
 */
import { attribute, completeFlow, defineFlow, defineStep, rpc } from "../../index.ts";
import { pauseHere, processRole } from "./pause-point.ts";

/** `hold: true` parks the Step in the paused process until its lease is lost, so the taker must take it over. */
export interface PausedWorkInput {
  hold: boolean;
}

/** The role of the process whose Worker committed the Flow's `Work`. */
export const doneBy = attribute<string>("DoneBy");
/** Written by the `writeNote` RPC. */
export const note = attribute<string>("Note");

const Work = defineStep<PausedWorkInput>("Work", {
  execute: async (context, input) => {
    const role = processRole();
    if (role === "paused" && input.hold) {
      globalThis.perdurePausedHolding = true;
      process.stdout.write(`holding ${context.flowId}\n`);
      await new Promise<void>((_resolve, reject) => {
        context.cancellationSignal.addEventListener("abort", () => reject(new Error("the hold ended: its lease was lost")), { once: true });
      });
    }
    context.write(doneBy, role);
    // This process's next transaction that starts on this Flow is this attempt's commit.
    if (role === "paused") globalThis.perdurePausedCommitArmed = context.flowId;
    return completeFlow(role);
  },
});

export const pausedFlow = defineFlow({
  type: "PausedWork",
  start: "Work",
  steps: [Work],
  persistence: { doneBy, note },
  rpcs: {
    writeNote: rpc<string, string>({
      name: "note",
      handler: async (context, text) => {
        await context.write(note, text);
        // An RPC handler that awaits something other than the store (here a timer) with its write staged.
        await pauseHere("rpc:handler");
        return text;
      },
    }),
  },
});

declare global {
  var perdurePausedCommitArmed: string | undefined;
}
