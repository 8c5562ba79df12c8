import type { MovementOptions } from "./step-options.ts";

/** One new Step execution a decision or RPC starts. */
export interface Movement {
  readonly stepType: string;
  readonly input: unknown;
  readonly options?: MovementOptions;
}

/** What an `execute` returns; every variant may also cancel Step types. */
export type StepDecision =
  | { readonly kind: "move"; readonly movements: readonly Movement[]; readonly cancelStepTypes?: readonly string[] }
  | { readonly kind: "dead_end"; readonly cancelStepTypes?: readonly string[] }
  | { readonly kind: "complete"; readonly output?: unknown; readonly cancelStepTypes?: readonly string[] }
  | { readonly kind: "fail"; readonly error: string; readonly cancelStepTypes?: readonly string[] };

/** Options shared by every decision helper. */
export interface DecisionOptions {
  /** Step types whose other active executions are cancelled in the same commit, before the new movements. */
  cancel?: readonly string[];
}

function withCancel<TDecision extends StepDecision>(decision: TDecision, options: DecisionOptions): TDecision {
  return options.cancel === undefined || options.cancel.length === 0 ? decision : { ...decision, cancelStepTypes: options.cancel };
}

/** A movement to one Step, for {@link moveToMany}. */
export function movement(stepType: string, input?: unknown, options?: MovementOptions): Movement {
  return options === undefined ? { stepType, input: input ?? null } : { stepType, input: input ?? null, options };
}

/**
 * Moves to one Step with its input.
 *
 * @example
 * return moveTo("SendReceipt", { orderId });
 */
export function moveTo(stepType: string, input?: unknown, options: MovementOptions & DecisionOptions = {}): StepDecision {
  const { cancel, ...movementOptions } = options;
  const hasOptions = Object.keys(movementOptions).length > 0;
  return withCancel({ kind: "move", movements: [movement(stepType, input, hasOptions ? movementOptions : undefined)] }, cancel === undefined ? {} : { cancel });
}

/** Moves to several Steps at once; they run in parallel. */
export function moveToMany(movements: readonly Movement[], options: DecisionOptions = {}): StepDecision {
  return withCancel({ kind: "move", movements }, options);
}

/** Ends this branch; the Flow stays alive for RPCs and other branches. */
export function deadEnd(options: DecisionOptions = {}): StepDecision {
  return withCancel({ kind: "dead_end" }, options);
}

/** Completes the Flow with an output and cancels every other execution. */
export function completeFlow(output?: unknown): StepDecision {
  return { kind: "complete", output: output ?? null };
}

/** Fails the Flow with an error text and cancels every other execution. */
export function failFlow(error: string): StepDecision {
  return { kind: "fail", error };
}
