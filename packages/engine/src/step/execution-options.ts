import { UnknownStepError } from "../errors/unknown-step-error.ts";
import type { StepDefinition } from "./step.ts";
import { resolveMethodOptions, type ResolvedMethodOptions, type StoredLoad, type StoredMovementOptions } from "./step-options.ts";

/** The Step types of a Flow, as far as resolving an execution's options needs them (a Flow definition is one). */
export interface FlowStepTypes {
  readonly flowType: string;
  readonly stepsByName: ReadonlyMap<string, StepDefinition<unknown>>;
}

/** The options one execution runs with: its Step type's, overridden by its movement's. */
export interface ExecutionOptions {
  step: StepDefinition<unknown>;
  waitUntil: ResolvedMethodOptions;
  execute: ResolvedMethodOptions;
  failureRoute: string | undefined;
  extraLoads: StoredLoad[];
}

const cache = new WeakMap<StepDefinition<unknown>, ExecutionOptions>();

/** Looks up a Step type of a Flow or throws `UnknownStepError`. */
export function stepOf(flow: FlowStepTypes, stepType: string): StepDefinition<unknown> {
  const step = flow.stepsByName.get(stepType);
  if (step === undefined) {
    throw new UnknownStepError(`Flow ${flow.flowType} has no Step type ${stepType}; known Step types: ${[...flow.stepsByName.keys()].join(", ")}`);
  }
  return step;
}

/** Resolves an execution's options; results without overrides are cached per Step type. */
export function resolveExecutionOptions(flow: FlowStepTypes, stepType: string, movementOptions: string | null): ExecutionOptions {
  const step = stepOf(flow, stepType);
  if (movementOptions === null) {
    const cached = cache.get(step);
    if (cached !== undefined) return cached;
  }
  const overrides = movementOptions === null ? {} : (JSON.parse(movementOptions) as StoredMovementOptions);
  const where = `Flow ${flow.flowType} Step ${stepType}`;
  const failureRoute = overrides.failureRoute ?? step.options.failureRoute;
  if (failureRoute !== undefined) stepOf(flow, failureRoute);
  const resolved: ExecutionOptions = {
    step,
    waitUntil: resolveMethodOptions(`${where} waitUntil`, step.options.waitUntilOptions, overrides.waitUntilOptions),
    execute: resolveMethodOptions(`${where} execute`, step.options.executeOptions, overrides.executeOptions),
    failureRoute,
    extraLoads: overrides.load ?? [],
  };
  if (movementOptions === null) cache.set(step, resolved);
  return resolved;
}
