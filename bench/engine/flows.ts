import { anyOf, channel, completeFlow, deadEnd, defineFlow, defineStep, type FlowCore, moveTo, moveToMany, movement, received } from "@perdure/engine";

/**
 * Lets a Step's execute tell the benchmark, in process and for free, that a
 * flow reached its final Step; the benchmark then confirms the commit once.
 */
export class FinalStepSignals {
  private readonly waiting = new Map<string, () => void>();

  expect(flowId: string): Promise<void> {
    return new Promise((resolve) => this.waiting.set(flowId, resolve));
  }

  signal(flowId: string): void {
    const resolve = this.waiting.get(flowId);
    this.waiting.delete(flowId);
    resolve?.();
  }
}

/** A chain of no-op Steps: the Step moves to itself until `remaining` reaches zero, then completes. */
export function createNoopChainFlow(flowType: string, signals?: FinalStepSignals): FlowCore {
  const NoopStep = defineStep<{ remaining: number }>("Noop", {
    execute: (context, input) => {
      if (input.remaining > 0) return moveTo("Noop", { remaining: input.remaining - 1 });
      signals?.signal(context.flowId);
      return completeFlow();
    },
  });
  return defineFlow({ type: flowType, start: "Noop", steps: [NoopStep] });
}

/** Start input of a no-op chain that runs exactly `stepCount` Steps. */
export function noopChainInput(stepCount: number): { remaining: number } {
  return { remaining: stepCount - 1 };
}

/** Fans out to `width` parallel Branch Steps that each publish once; a Join waits for all of them. */
export function createFanOutFlow(flowType: string, signals: FinalStepSignals): FlowCore {
  const branchResults = channel<number>("BranchResults");
  const StartStep = defineStep<{ width: number }>("Start", {
    execute: (_context, input) => moveToMany([
      ...Array.from({ length: input.width }, (_unused, index) => movement("Branch", { index })),
      movement("Join", { expected: input.width }),
    ]),
  });
  const BranchStep = defineStep<{ index: number }>("Branch", {
    execute: (context, input) => {
      context.publish(branchResults, input.index);
      return deadEnd();
    },
  });
  const JoinStep = defineStep<{ expected: number }>("Join", {
    waitUntil: (_context, input) => anyOf(received(branchResults, { exactly: input.expected })),
    execute: (context, input) => {
      const joined = context.consumed(branchResults).length;
      if (joined !== input.expected) throw new Error(`Join consumed ${joined} messages, expected ${input.expected}`);
      signals.signal(context.flowId);
      return completeFlow({ joined });
    },
  });
  return defineFlow({ type: flowType, start: "Start", steps: [StartStep, BranchStep, JoinStep], persistence: { branchResults } });
}

/** A flow whose start Step waits on a Channel nobody publishes to: an idle flow. */
export function createIdleWaiterFlow(onAsked: () => void): FlowCore {
  const wakeUps = channel<string>("WakeUps");
  const AwaitWakeUpStep = defineStep("AwaitWakeUp", {
    waitUntil: () => {
      onAsked();
      return anyOf(received(wakeUps));
    },
    execute: () => completeFlow(),
  });
  return defineFlow({ type: "IdleWaiter", start: "AwaitWakeUp", steps: [AwaitWakeUpStep], persistence: { wakeUps } });
}
