import { InvalidDefinitionError } from "../errors/invalid-definition-error.ts";
import { validateName } from "../internal/validate-name.ts";
import type { Condition, Conditions } from "../condition/condition.ts";
import type { StepDecision } from "./decision.ts";
import type { ExecuteContext, StepContext } from "./step-context.ts";
import type { StepOptions } from "./step-options.ts";

type MaybePromise<TValue> = TValue | Promise<TValue>;

/** A Step type: an optional wait, then an execute that decides what comes next. */
export interface StepDefinition<TInput = unknown> {
  readonly kind: "step";
  readonly name: string;
  readonly waitUntil: ((context: StepContext, input: TInput) => MaybePromise<Conditions | Condition | null | undefined>) | undefined;
  readonly execute: (context: ExecuteContext, input: TInput) => MaybePromise<StepDecision>;
  readonly options: StepOptions<TInput>;
}

/** Everything {@link defineStep} takes besides the name. */
export interface StepSpec<TInput> extends StepOptions<TInput> {
  /** Returns the conditions to wait for (one condition means `anyOf` of it); `null` means ready at once. */
  waitUntil?: (context: StepContext, input: TInput) => MaybePromise<Conditions | Condition | null | undefined>;
  execute: (context: ExecuteContext, input: TInput) => MaybePromise<StepDecision>;
}

/**
 * Declares a Step type.
 *
 * @example
 * const Charge = defineStep<{ orderId: string }>("Charge", {
 *   execute: async (ctx, input) => {
 *     await payments.charge(input.orderId);
 *     return moveTo("SendReceipt", input);
 *   },
 *   executeOptions: { retry: { maximumAttempts: 1 } },
 * });
 */
export function defineStep<TInput = unknown>(name: string, spec: StepSpec<TInput>): StepDefinition<TInput> {
  validateName("Step", name);
  if (typeof spec.execute !== "function") {
    throw new InvalidDefinitionError(`Step ${name} has no execute function`);
  }
  if (spec.waitUntil !== undefined && typeof spec.waitUntil !== "function") {
    throw new InvalidDefinitionError(`Step ${name} waitUntil must be a function`);
  }
  if (spec.waitUntilLoad !== undefined && (spec.waitUntil === undefined || !Array.isArray(spec.waitUntilLoad))) {
    throw new InvalidDefinitionError(`Step ${name} waitUntilLoad ${spec.waitUntil === undefined ? "needs a waitUntil function" : "must be a list of load selections"}`);
  }
  const { waitUntil, execute, ...options } = spec;
  return Object.freeze({ kind: "step", name, waitUntil, execute, options });
}
