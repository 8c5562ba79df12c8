import type { AttributeDefinition, AttributeMapDefinition } from "../attribute/attribute.ts";
import type { ChannelDefinition, ChannelMapDefinition } from "../channel/channel.ts";
import { InvalidDefinitionError } from "../errors/invalid-definition-error.ts";
import { validateName } from "../internal/validate-name.ts";
import type { RpcContext, RpcSpec } from "../rpc/rpc.ts";
import type { StepDefinition } from "../step/step.ts";
import type { StreamDefinition } from "../stream/stream.ts";

/** Any persistence definition a Flow may declare. */
export type PersistenceDefinition =
  | AttributeDefinition<unknown>
  | AttributeMapDefinition<unknown>
  | ChannelDefinition<unknown>
  | ChannelMapDefinition<unknown>
  | StreamDefinition<unknown>;

type AnyStep = StepDefinition<never>;
/** Any RPC spec, whatever its input and output types. */
export interface AnyRpcSpec {
  readonly name: string;
  readonly parseInput?: ((input: unknown) => unknown) | undefined;
  readonly locks?: RpcSpec<unknown, unknown>["locks"];
  readonly handler: (context: never, input: never) => unknown;
}

/** The parts of a Flow definition the engine reads. */
export interface FlowCore {
  readonly kind: "flow";
  readonly flowType: string;
  readonly stepsByName: ReadonlyMap<string, StepDefinition<unknown>>;
  readonly startStepType: string | undefined;
  readonly persistenceByName: ReadonlyMap<string, PersistenceDefinition>;
  readonly rpcsByName: ReadonlyMap<string, RpcReference<unknown, unknown>>;
  /** Completed Step methods kept in the Step history per Flow instance. */
  readonly historyRetention: number;
  readonly parseInput: ((input: unknown) => unknown) | undefined;
}

/** An RPC of a Flow type, as exposed on the Flow definition. */
export interface RpcReference<TInput, TOutput> extends Readonly<RpcSpec<TInput, TOutput>> {
  readonly kind: "rpc";
  readonly flowType: string;
  /** The Flow definition the RPC belongs to. */
  readonly flow: FlowCore;
}

/** What {@link defineFlow} takes. */
export interface FlowSpec<TPersistence extends Record<string, PersistenceDefinition>, TRpcs extends Record<string, AnyRpcSpec>> {
  /** The Flow type name, unique within a store. */
  type: string;
  steps: readonly AnyStep[];
  /** Step type started with the Flow's input. @default none: the Flow starts idle */
  start?: string;
  /** Attributes, maps, Channels and Streams; each becomes a property of the definition. */
  persistence?: TPersistence;
  /** RPCs; each becomes a property of the definition, for `client.invokeRPC`. */
  rpcs?: TRpcs;
  /**
   * Completed Step methods kept in each Flow instance's Step history.
   * @default 1000
   */
  historyRetention?: number;
  /** Validates the start input; throw to refuse it. @default accepts any JSON value */
  parseInput?: (input: unknown) => unknown;
}

type RpcReferences<TRpcs> = {
  readonly [TKey in keyof TRpcs]: TRpcs[TKey] extends { handler: (context: RpcContext, input: infer TInput) => infer TResult }
    ? RpcReference<TInput, Awaited<TResult>>
    : never;
};

/** A Flow type: its core plus its persistence definitions and RPC references as properties. */
export type FlowDefinition<
  TPersistence extends Record<string, PersistenceDefinition> = Record<string, PersistenceDefinition>,
  TRpcs extends Record<string, AnyRpcSpec> = Record<string, AnyRpcSpec>,
> = FlowCore & Readonly<TPersistence> & RpcReferences<TRpcs>;

const reservedProperties = new Set(["kind", "flowType", "stepsByName", "startStepType", "persistenceByName", "rpcsByName", "historyRetention", "parseInput"]);

function checkProperty(flowType: string, seen: Set<string>, property: string): void {
  if (reservedProperties.has(property) || seen.has(property)) {
    throw new InvalidDefinitionError(`Flow ${flowType}: property ${JSON.stringify(property)} is used twice or reserved; rename the persistence definition or RPC`);
  }
  seen.add(property);
}

function indexSteps(flowType: string, steps: readonly AnyStep[]): Map<string, StepDefinition<unknown>> {
  const byName = new Map<string, StepDefinition<unknown>>();
  for (const step of steps) {
    if (step?.kind !== "step") throw new InvalidDefinitionError(`Flow ${flowType}: steps must be made with defineStep; got ${JSON.stringify(step)}`);
    if (byName.has(step.name)) throw new InvalidDefinitionError(`Flow ${flowType}: Step type ${step.name} is defined twice`);
    byName.set(step.name, step as StepDefinition<unknown>);
  }
  return byName;
}

function checkStepReferences(flowType: string, steps: ReadonlyMap<string, StepDefinition<unknown>>, persistence: ReadonlyMap<string, PersistenceDefinition>): void {
  for (const step of steps.values()) {
    const route = step.options.failureRoute;
    if (route !== undefined && !steps.has(route)) {
      throw new InvalidDefinitionError(`Flow ${flowType}: Step ${step.name} has failure route ${route}, which is not a Step of this Flow`);
    }
    for (const lock of [...(step.options.waitUntilOptions?.locks ?? []), ...(step.options.executeOptions?.locks ?? [])]) {
      const kind = persistence.get(lock.name)?.kind;
      if (kind !== "attribute" && kind !== "attribute_map") {
        throw new InvalidDefinitionError(`Flow ${flowType}: Step ${step.name} locks ${lock.name}, which is not an Attribute or AttributeMap of this Flow`);
      }
    }
  }
}

/**
 * Declares a Flow type. Definitions are checked eagerly: duplicate names,
 * unknown Step types and unknown lock targets fail here with a clear error.
 *
 * @example
 * const orderFlow = defineFlow({
 *   type: "Order",
 *   start: "Charge",
 *   steps: [Charge, SendReceipt],
 *   persistence: { status: attribute<string>("Status") },
 *   rpcs: { getStatus: rpc({ name: "get_status", handler: (ctx) => ctx.read(status) }) },
 * });
 * await client.invokeRPC(orderFlow.getStatus, "order-7", undefined);
 */
export function defineFlow<
  TPersistence extends Record<string, PersistenceDefinition> = Record<never, PersistenceDefinition>,
  TRpcs extends Record<string, AnyRpcSpec> = Record<never, AnyRpcSpec>,
>(spec: FlowSpec<TPersistence, TRpcs>): FlowDefinition<TPersistence, TRpcs> {
  const flowType = validateName("Flow", spec.type);
  const stepsByName = indexSteps(flowType, spec.steps ?? []);
  if (spec.start !== undefined && !stepsByName.has(spec.start)) {
    throw new InvalidDefinitionError(`Flow ${flowType}: start Step ${spec.start} is not one of its steps (${[...stepsByName.keys()].join(", ") || "none"})`);
  }
  const historyRetention = spec.historyRetention ?? 1000;
  if (!Number.isSafeInteger(historyRetention) || historyRetention < 0) {
    throw new InvalidDefinitionError(`Flow ${flowType}: historyRetention ${String(historyRetention)} is invalid: use an integer >= 0`);
  }
  const properties = new Set<string>();
  const persistenceByName = new Map<string, PersistenceDefinition>();
  const definition: Record<string, unknown> = {};
  for (const [property, persistence] of Object.entries(spec.persistence ?? {})) {
    checkProperty(flowType, properties, property);
    const known = ["attribute", "attribute_map", "channel", "channel_map", "stream"];
    if (!known.includes((persistence as { kind?: string } | null)?.kind ?? "")) {
      throw new InvalidDefinitionError(`Flow ${flowType}: persistence ${property} is not an Attribute, AttributeMap, Channel, ChannelMap or Stream`);
    }
    if (persistenceByName.has(persistence.name)) {
      throw new InvalidDefinitionError(`Flow ${flowType}: persistence name ${persistence.name} is declared twice`);
    }
    persistenceByName.set(persistence.name, persistence);
    definition[property] = persistence;
  }
  checkStepReferences(flowType, stepsByName, persistenceByName);
  const rpcsByName = new Map<string, RpcReference<unknown, unknown>>();
  // RPC references point back at the finished definition, which is frozen below.
  const holder: { definition?: FlowCore } = {};
  for (const [property, spec_] of Object.entries(spec.rpcs ?? {})) {
    checkProperty(flowType, properties, property);
    if (typeof spec_?.handler !== "function") throw new InvalidDefinitionError(`Flow ${flowType}: RPC ${property} has no handler; declare it with rpc()`);
    validateName("RPC", spec_.name);
    if (rpcsByName.has(spec_.name)) throw new InvalidDefinitionError(`Flow ${flowType}: RPC name ${spec_.name} is declared twice`);
    for (const lock of spec_.locks ?? []) {
      const kind = persistenceByName.get(lock.name)?.kind;
      if (kind !== "attribute" && kind !== "attribute_map") {
        throw new InvalidDefinitionError(`Flow ${flowType}: RPC ${spec_.name} locks ${lock.name}, which is not an Attribute or AttributeMap of this Flow`);
      }
    }
    const reference = Object.freeze(Object.defineProperty({ ...spec_, kind: "rpc", flowType }, "flow", {
      get: () => holder.definition,
      enumerable: false,
    })) as unknown as RpcReference<unknown, unknown>;
    rpcsByName.set(spec_.name, reference);
    definition[property] = reference;
  }
  const core: FlowCore = {
    kind: "flow",
    flowType,
    stepsByName,
    startStepType: spec.start,
    persistenceByName,
    rpcsByName,
    historyRetention,
    parseInput: spec.parseInput,
  };
  const finished = Object.freeze({ ...definition, ...core }) as FlowDefinition<TPersistence, TRpcs>;
  holder.definition = finished;
  return finished;
}
