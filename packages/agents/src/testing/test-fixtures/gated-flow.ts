/**
 * A tiny Flow for the testing helpers' own tests, imported by the test
 * process (to start it) and by Worker child processes (to run it).
 * `Gated` records each real run in an InvocationLog, then parks at a FileGate
 * until the test opens it; `Finish` completes the Flow.
 */
import { completeFlow, defineFlow, defineStep, moveTo, type FlowCore } from "@perdure/engine";
import { FileGate } from "../file-gate.ts";
import { InvocationLog } from "../invocation-log.ts";

/** Input of {@link gatedFlow}. */
export interface GatedFlowInput {
  gateDirectory: string;
  invocationLogPath: string;
}

/** The name of the FileGate `Gated` waits at. */
export const gatedStepGateName = "gated-step";

const Gated = defineStep<GatedFlowInput>("Gated", {
  execute: async (context, input) => {
    new InvocationLog(input.invocationLogPath).record("Gated", { attempt: context.attempt });
    await new FileGate(input.gateDirectory, gatedStepGateName).waitUntilOpen({ signal: context.cancellationSignal });
    return moveTo("Finish", input);
  },
  executeOptions: { retry: { initialIntervalMs: 20, backoffCoefficient: 1, maximumAttempts: 5 } },
});

const Finish = defineStep<GatedFlowInput>("Finish", {
  execute: (_context, input) => {
    new InvocationLog(input.invocationLogPath).record("Finish");
    return completeFlow({ finished: true });
  },
});

/** Gated (waits at a FileGate) then Finish. */
export const gatedFlow: FlowCore = defineFlow({ type: "TestingGated", start: "Gated", steps: [Gated, Finish] });
