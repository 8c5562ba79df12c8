import type { AttributeMapSelection, AttributeRef } from "../attribute/attribute.ts";
import type { ChannelRef } from "../channel/channel.ts";
import { InvalidDefinitionError } from "../errors/invalid-definition-error.ts";
import type { ResolvedRetryPolicy, RetryPolicy } from "./retry-policy.ts";

/** What a Step loads besides its plain Attributes: map instances, map ranges and Channel contents. */
export type LoadSelection = AttributeRef<unknown> | AttributeMapSelection | ChannelRef<unknown>;

/** Options of one Step method (`waitUntil` or `execute`). */
export interface MethodOptions {
  /**
   * Longest time one attempt may run; the attempt then fails and its signal aborts.
   * @default 600_000 (10 minutes)
   */
  timeoutMs?: number;
  /**
   * The attempt fails when no heartbeat arrives within this time.
   * @default null (only the method timeout and Worker liveness apply)
   */
  heartbeatTimeoutMs?: number | null;
  /** @default see {@link RetryPolicy} */
  retry?: RetryPolicy;
  /**
   * Attributes (or map instances) held from claim to commit. The method is
   * dispatched only when all are free; an RPC that needs one fails fast.
   * @default []
   */
  locks?: readonly AttributeRef<unknown>[];
}

/** Options of a Step type; a movement may override them for one execution. */
export interface StepOptions<TInput> {
  /** Options of `waitUntil`. @default {} */
  waitUntilOptions?: MethodOptions;
  /** Options of `execute`. @default {} */
  executeOptions?: MethodOptions;
  /**
   * Step type that receives this Step's input and a recovery error once its
   * retries are exhausted.
   * @default none: the Flow fails
   */
  failureRoute?: string;
  /**
   * Map instances and Channels loaded into the snapshot, static or computed
   * from the input and the plain Attributes.
   * @default []
   */
  load?: readonly LoadSelection[] | ((input: TInput, attributes: PlainAttributeReader) => readonly LoadSelection[]);
  /**
   * What `waitUntil` loads instead of `load`, when it needs less than
   * `execute` (`[]`: its plain Attributes only). A movement's own loads are
   * added to both methods.
   * @default the Step's `load`
   */
  waitUntilLoad?: readonly LoadSelection[];
}

/** A Step method, as an execution's status asks for it. */
export type StepMethodName = "wait_until" | "execute";

/** The load selection of one method of a Step type: `waitUntilLoad` for `waitUntil` when given, else `load`. */
export function methodLoadOf<TInput>(options: StepOptions<TInput>, method: StepMethodName): StepOptions<TInput>["load"] {
  return method === "wait_until" && options.waitUntilLoad !== undefined ? options.waitUntilLoad : options.load;
}

/** Reads plain Attributes while choosing what to load. */
export interface PlainAttributeReader {
  read<TValue>(attribute: AttributeRef<TValue>): TValue | undefined;
}

/** Per-movement overrides of a Step type's options, for one execution. */
export interface MovementOptions {
  waitUntilOptions?: MethodOptions;
  executeOptions?: MethodOptions;
  failureRoute?: string;
  /** Added to the Step type's own load selection. */
  load?: readonly LoadSelection[];
}

/** Method options as stored with an execution: locks by name. */
export type StoredMethodOptions = Omit<MethodOptions, "locks"> & { lockNames?: string[] };

/** {@link MovementOptions} in their serializable, stored form. */
export interface StoredMovementOptions {
  waitUntilOptions?: StoredMethodOptions;
  executeOptions?: StoredMethodOptions;
  failureRoute?: string;
  load?: StoredLoad[];
}

function storedMethodOptions(options: MethodOptions): StoredMethodOptions {
  const { locks, ...rest } = options;
  return locks === undefined ? rest : { ...rest, lockNames: locks.map(lockName) };
}

/** Converts movement options to the JSON stored with the execution. */
export function storedMovementOptions(options: MovementOptions): StoredMovementOptions {
  const stored: StoredMovementOptions = {};
  if (options.waitUntilOptions !== undefined) stored.waitUntilOptions = storedMethodOptions(options.waitUntilOptions);
  if (options.executeOptions !== undefined) stored.executeOptions = storedMethodOptions(options.executeOptions);
  if (options.failureRoute !== undefined) stored.failureRoute = options.failureRoute;
  if (options.load !== undefined) stored.load = options.load.map(storedLoad);
  return stored;
}

export interface ResolvedMethodOptions {
  timeoutMs: number;
  heartbeatTimeoutMs: number | null;
  retry: ResolvedRetryPolicy;
  lockNames: string[];
}

/** A serializable load selection, as stored on an execution. */
export type StoredLoad =
  | { kind: "instance"; name: string; key: string }
  | { kind: "range"; name: string; fromKey?: string; toKey?: string; limit?: number }
  | { kind: "channel"; name: string; key: string };

/** The name under which an Attribute or map instance is locked. */
export function lockName(ref: AttributeRef<unknown>): string {
  return ref.key === "" ? ref.name : `${ref.name}[${ref.key}]`;
}

export function storedLoad(selection: LoadSelection): StoredLoad {
  switch (selection.kind) {
    case "attribute":
    case "attribute_instance":
      return { kind: "instance", name: selection.name, key: selection.key };
    case "attribute_map_selection": {
      const range: StoredLoad = { kind: "range", name: selection.name };
      if (selection.fromKey !== undefined) range.fromKey = selection.fromKey;
      if (selection.toKey !== undefined) range.toKey = selection.toKey;
      if (selection.limit !== undefined) range.limit = selection.limit;
      return range;
    }
    case "channel":
    case "channel_instance":
      return { kind: "channel", name: selection.name, key: selection.key };
  }
}

function positive(where: string, name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) {
    throw new InvalidDefinitionError(`${where}: ${name} ${String(value)} is invalid: use a positive number`);
  }
  return value;
}

/**
 * Turns public method options (with a movement's overrides) into resolved
 * ones. Every default of {@link MethodOptions} and {@link RetryPolicy} lives here.
 */
export function resolveMethodOptions(where: string, base: MethodOptions = {}, override: StoredMethodOptions = {}): ResolvedMethodOptions {
  const retry = { ...base.retry, ...override.retry };
  const maximumAttempts = positive(where, "retry.maximumAttempts", retry.maximumAttempts, 3);
  if (!Number.isSafeInteger(maximumAttempts)) {
    throw new InvalidDefinitionError(`${where}: retry.maximumAttempts ${maximumAttempts} is invalid: use a positive integer`);
  }
  const heartbeat = override.heartbeatTimeoutMs !== undefined ? override.heartbeatTimeoutMs : base.heartbeatTimeoutMs;
  const total = retry.totalDurationMs ?? null;
  return {
    timeoutMs: positive(where, "timeoutMs", override.timeoutMs ?? base.timeoutMs, 600_000),
    heartbeatTimeoutMs: heartbeat === null || heartbeat === undefined ? null : positive(where, "heartbeatTimeoutMs", heartbeat, 0),
    retry: {
      initialIntervalMs: positive(where, "retry.initialIntervalMs", retry.initialIntervalMs, 1000),
      backoffCoefficient: positive(where, "retry.backoffCoefficient", retry.backoffCoefficient, 2),
      maximumIntervalMs: positive(where, "retry.maximumIntervalMs", retry.maximumIntervalMs, 60_000),
      maximumAttempts,
      totalDurationMs: total === null ? null : positive(where, "retry.totalDurationMs", total, 0),
    },
    lockNames: override.lockNames ?? (base.locks ?? []).map(lockName),
  };
}
