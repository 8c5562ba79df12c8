import { describeValue } from "../errors/describe-value.ts";
import type { AttributeMapDefinition, AttributeRef } from "../attribute/attribute.ts";
import { FlowAlreadyExistsError } from "../errors/flow-already-exists-error.ts";
import { FlowNotFoundError } from "../errors/flow-not-found-error.ts";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import type { FlowCore, RpcReference } from "../flow/flow.ts";
import type { FlowStatus } from "../store/flow-status.ts";
import { FlowTransaction, newExecutionRow } from "../flow/flow-transaction.ts";
import { onLocalFlowEnd, type EndedFlow } from "../flow/local-flow-ends.ts";
import { jsonCodec } from "../internal/codec.ts";
import { decodeValue, encodeValue } from "../internal/encode.ts";
import { invokeRpc } from "./invoke-rpc.ts";
import { pauseUntilWoken, waitForChange, type WrittenVerdict } from "./wait-for-change.ts";
import type { WrittenValue } from "../flow/local-commits.ts";
import { resolveInvokeRpcOptions, type InvokeRpcOptions } from "./invoke-rpc-options.ts";
import type { ActiveExecution } from "../rpc/rpc.ts";
import type { FlowRead } from "../store/step-commit.ts";
import type { ExecutionRow, FlowRow, HistoryRow, Store, StoreTransaction } from "../store/store.ts";
import { listRecentStreamMessages, readStream, type ReadStreamOptions, type StreamMessage, type StreamReadResult } from "../stream/stream-reader.ts";
import type { StreamDefinition } from "../stream/stream.ts";
import { claimStartLocally } from "../worker/local-handover.ts";

/** Options of {@link Client}. */
export interface ClientOptions {
  store: Store;
}

/** Options of `client.start`. */
export interface StartFlowOptions {
  /**
   * Makes the start idempotent: starting the same flow ID again with the same
   * request ID succeeds without a second start; another request ID fails with
   * `FlowAlreadyExistsError`.
   * @default none: a second start of the flow ID fails
   */
  requestId?: string;
  /**
   * Attribute values (plain Attributes or map instances of this Flow) that
   * commit together with the start, so the start Step already reads them. A
   * start with attributes is one transaction: the Flow exists with all of
   * them or not at all. Operations that build a Flow from another's state
   * (an agent session's fork) start it this way.
   * @default none
   */
  attributes?: readonly InitialAttribute[];
}

/** One Attribute value a Flow starts with: an Attribute or map instance of the Flow, and its value. */
export interface InitialAttribute<TValue = unknown> {
  ref: AttributeRef<TValue>;
  value: TValue;
}

/** What `client.readFlowState` hands its reader: one consistent view of a Flow's Attributes. */
export interface FlowStateReader {
  /** The value of an Attribute or map instance, or `undefined` when unset. */
  get<TValue>(ref: AttributeRef<TValue>): Promise<TValue | undefined>;
  /** The map's instances in key order, optionally from `fromKey` (inclusive) to `toKey` (exclusive), at most `limit`. */
  list<TValue>(map: AttributeMapDefinition<TValue>, range?: { fromKey?: string; toKey?: string; limit?: number }): Promise<{ key: string; value: TValue }[]>;
}

/** Options of `client.waitForFlow`. */
export interface WaitForFlowOptions {
  /** How long to wait for the Flow to end before describing it as it is. @default 30000 */
  timeoutMs?: number;
  /** Ends the wait early; the Flow is described as it is then. */
  signal?: AbortSignal;
}

/** A Flow instance as `client.describe` reports it. */
export interface FlowDescription {
  flowId: string;
  flowType: string;
  status: FlowStatus;
  input: unknown;
  output: unknown;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  executions: ActiveExecution[];
}

/** A completed (or failed, or cancelled) Step method in a Flow's Step history. */
export interface StepHistoryEntry {
  executionId: string;
  stepType: string;
  method: HistoryRow["method"];
  status: HistoryRow["status"];
  attempt: number;
  startedAt: Date;
  finishedAt: Date;
  /** The decision (for `execute`) or the conditions (for `wait_until`). */
  outcome: unknown;
  error: string | null;
}

/** What `describe` returns for a Flow's stored fields and its unfinished executions. */
function descriptionOf(row: Pick<FlowRow, "flowId" | "flowType" | "status" | "input" | "output" | "error" | "createdAt" | "updatedAt">, executions: readonly ExecutionRow[]): FlowDescription {
  return {
    flowId: row.flowId,
    flowType: row.flowType,
    status: row.status,
    input: JSON.parse(row.input) as unknown,
    output: row.output === null ? null : (JSON.parse(row.output) as unknown),
    error: row.error,
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
    executions: executions.map((execution) => ({
      executionId: execution.executionId,
      stepType: execution.stepType,
      status: execution.claimedBy !== null ? "running" : execution.status === "asking" ? "waiting_to_be_asked" : execution.status,
    })),
  };
}

function checkFlowId(flowId: unknown): string {
  const valid = typeof flowId === "string" && flowId.length > 0 && flowId.length <= 256
    && [...flowId].every((character) => character.charCodeAt(0) > 0x20 && character.charCodeAt(0) !== 0x7f);
  if (!valid) {
    throw new InvalidInputError(`flow ID ${describeValue(flowId)} is invalid: use 1 to 256 characters without whitespace or control characters`);
  }
  return flowId;
}

function flowAlreadyExists(flowId: string, existing: Pick<FlowRow, "flowType" | "status">): FlowAlreadyExistsError {
  return new FlowAlreadyExistsError(`Flow ${flowId} already exists (type ${existing.flowType}, status ${existing.status}); start it with the same requestId to make the start idempotent`);
}

/** Checks and encodes a start's initial Attribute values: each must be an Attribute or map instance of the Flow. */
function encodeInitialAttributes(flow: FlowCore, flowId: string, attributes: readonly InitialAttribute[], maxValueBytes: number): { name: string; key: string; text: string }[] {
  if (!Array.isArray(attributes)) throw new InvalidInputError(`start attributes of Flow ${flowId} must be an array of { ref, value }, got ${describeValue(attributes)}`);
  const seen = new Set<string>();
  return attributes.map((initial, position) => {
    const ref = (initial as Partial<InitialAttribute> | null)?.ref;
    const definition = typeof ref?.name === "string" ? flow.persistenceByName.get(ref.name) : undefined;
    const matches = definition !== undefined && ref !== undefined
      && ((ref.kind === "attribute" && definition.kind === "attribute") || (ref.kind === "attribute_instance" && definition.kind === "attribute_map"));
    if (!matches) {
      throw new InvalidInputError(`start attribute ${position} of Flow ${flowId} names ${describeValue(ref?.name)}, which is no Attribute or AttributeMap of Flow type ${flow.flowType}`);
    }
    const where = `${ref.name}${ref.key === "" ? "" : `[${ref.key}]`}`;
    if (seen.has(where)) throw new InvalidInputError(`start attributes of Flow ${flowId} set ${where} twice`);
    seen.add(where);
    const value: unknown = (initial as { value?: unknown }).value;
    if (value === null || value === undefined) throw new InvalidInputError(`start attribute ${where} of Flow ${flowId} has no value; leave it out instead`);
    return { name: ref.name, key: ref.key, text: encodeValue(`start attribute ${where} of Flow ${flowId}`, ref.codec, value, maxValueBytes) };
  });
}

/** A Flow core for operations that do not need the definition (stop). */
function bareFlowCore(flowType: string): FlowCore {
  return {
    kind: "flow",
    flowType,
    stepsByName: new Map(),
    startStepType: undefined,
    persistenceByName: new Map(),
    rpcsByName: new Map(),
    historyRetention: 1000,
    parseInput: undefined,
  };
}

/**
 * Starts, stops and talks to Flow instances, straight through the store.
 *
 * @example
 * const client = new Client({ store });
 * await client.start(orderFlow, "order-7", { amount: 12 });
 * const status = await client.invokeRPC(orderFlow.getStatus, "order-7");
 */
export class Client {
  readonly store: Store;

  constructor(options: ClientOptions) {
    this.store = options.store;
  }

  /** Runs a read on the store's lock-free read path where it has one, else as a transaction. */
  private read<TResult>(work: (transaction: StoreTransaction) => Promise<TResult>): Promise<TResult> {
    return this.store.read === undefined ? this.store.transaction(work) : this.store.read(work);
  }

  /** Starts a Flow instance with its input; returns whether this call created it. */
  async start(flow: FlowCore, flowId: string, input?: unknown, options: StartFlowOptions = {}): Promise<{ created: boolean }> {
    checkFlowId(flowId);
    let parsed: unknown = input ?? null;
    if (flow.parseInput !== undefined) {
      try {
        parsed = flow.parseInput(parsed);
      } catch (error) {
        throw new InvalidInputError(`start input of Flow ${flow.flowType} ${flowId} is invalid: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    }
    const encoded = encodeValue(`start input of Flow ${flowId}`, jsonCodec, parsed as never, this.store.maxValueBytes);
    const initialAttributes = encodeInitialAttributes(flow, flowId, options.attributes ?? [], this.store.maxValueBytes);
    const now = this.store.clock.now();
    const oneRequest = this.store.oneRequest;
    if (oneRequest !== undefined && initialAttributes.length === 0) {
      const row = { flowId, flowType: flow.flowType, status: "running" as const, input: encoded, output: null, error: null, requestId: options.requestId ?? null, createdAt: now, updatedAt: now, nextSeq: 1 };
      const startExecution = flow.startStepType === undefined ? null : newExecutionRow(flow, flowId, 1, { stepType: flow.startStepType, input: encoded, options: null, recoveryError: null }, now);
      // The start Step takes sequence number 1, so the Flow's next one is 2, as the general path leaves it.
      const flowRow = { ...row, nextSeq: startExecution === null ? 1 : 2 };
      // A Worker of this process with a slot free takes the start Step in this same request.
      const local = startExecution === null ? undefined : claimStartLocally(this.store, flow, startExecution, now);
      const reply = local === undefined
        ? await oneRequest.startFlow({ flow: flowRow, startExecution })
        : await local.run(() => oneRequest.startFlow({ flow: flowRow, startExecution: local.execution }));
      if (!reply.created) {
        const { existing } = reply;
        if (options.requestId !== undefined && existing.requestId === options.requestId && existing.flowType === flow.flowType) return { created: false };
        throw flowAlreadyExists(flowId, existing);
      }
      if (startExecution !== null && local === undefined) this.store.wake({ kind: "tasks", at: now });
      return { created: true };
    }
    const result = await this.store.transaction(async (transaction) => {
      const existing = await transaction.lockFlow(flowId);
      if (existing !== undefined) {
        if (options.requestId !== undefined && existing.requestId === options.requestId && existing.flowType === flow.flowType) return undefined;
        throw flowAlreadyExists(flowId, existing);
      }
      await transaction.insertFlow({
        flowId, flowType: flow.flowType, status: "running", input: encoded, output: null, error: null,
        requestId: options.requestId ?? null, createdAt: now, updatedAt: now, nextSeq: 1,
      });
      const flowTransaction = await FlowTransaction.open(transaction, flow, flowId, now);
      if (flowTransaction === undefined) throw new Error(`Flow ${flowId} vanished inside its own start`);
      for (const initial of initialAttributes) await flowTransaction.writeAttribute(initial.name, initial.key, initial.text);
      if (flow.startStepType !== undefined) {
        await flowTransaction.schedule({ stepType: flow.startStepType, input: encoded, options: null, recoveryError: null });
      }
      await flowTransaction.close();
      return flowTransaction;
    });
    result?.announce(this.store);
    return { created: result !== undefined };
  }

  /**
   * `start` under the name the agents contract's examples use.
   *
   * @example
   * await client.startFlow(supportAgentFlow, "session-1", { initial_message: "hello" });
   */
  startFlow(flow: FlowCore, flowId: string, input?: unknown, options: StartFlowOptions = {}): Promise<{ created: boolean }> {
    return this.start(flow, flowId, input, options);
  }

  /** `stop` under the name the agents contract's examples use. */
  stopFlow(flowId: string, reason?: string): Promise<void> {
    return this.stop(flowId, reason);
  }

  /** Stops a running Flow instance: cancels every execution and marks it `stopped`. */
  async stop(flowId: string, reason = "stopped by client"): Promise<void> {
    checkFlowId(flowId);
    const now = this.store.clock.now();
    const flowTransaction = await this.store.transaction(async (transaction) => {
      const row = await transaction.lockFlow(flowId);
      if (row === undefined) throw new FlowNotFoundError(`no Flow has ID ${describeValue(flowId)}`);
      if (row.status !== "running") return undefined;
      const opened = await FlowTransaction.open(transaction, bareFlowCore(row.flowType), flowId, now);
      await opened?.finish("stopped", { error: reason });
      await opened?.close();
      return opened;
    });
    flowTransaction?.announce(this.store);
  }

  /**
   * Calls an RPC of a Flow instance: one atomic commit. An RPC that declares
   * locks fails fast with `RpcLockConflictError` while a running Step holds
   * one, unless `options.lockConflictRetryMs` says how long to keep trying.
   *
   * @example
   * await client.invokeRPC(flow.resolveInterrupt, sessionId, { interruptId, approved: true }, { lockConflictRetryMs: 10_000 });
   */
  invokeRPC<TInput, TOutput>(
    reference: RpcReference<TInput, TOutput>,
    flowId: string,
    ...inputAndOptions: undefined extends TInput
      ? [input?: NoInfer<TInput>, options?: InvokeRpcOptions]
      : [input: NoInfer<TInput>, options?: InvokeRpcOptions]
  ): Promise<TOutput> {
    checkFlowId(flowId);
    const [input, options] = inputAndOptions;
    return invokeRpc(this.store, reference, flowId, input, resolveInvokeRpcOptions(options));
  }

  /**
   * Reads committed Attributes or map instances; `undefined` for unset ones.
   *
   * @example
   * const [balance, order] = await client.getAttributes(id, flow.balance, flow.orders.instance("o-1"));
   */
  async getAttributes<const TRefs extends readonly AttributeRef<unknown>[]>(
    flowId: string,
    ...refs: TRefs
  ): Promise<{ [TIndex in keyof TRefs]: TRefs[TIndex] extends AttributeRef<infer TValue> ? TValue | undefined : never }> {
    checkFlowId(flowId);
    const oneRequest = this.store.oneRequest;
    const texts = oneRequest?.readAttributes !== undefined
      ? await oneRequest.readAttributes(flowId, refs)
      : await this.read(async (transaction) => {
        if ((await transaction.lockFlow(flowId)) === undefined) return undefined;
        const values: (string | undefined)[] = [];
        for (const ref of refs) values.push(await transaction.readAttribute(flowId, ref.name, ref.key));
        return values;
      });
    if (texts === undefined) throw new FlowNotFoundError(`no Flow has ID ${describeValue(flowId)}`);
    return refs.map((ref, index) => {
      const text = texts[index];
      return text === undefined ? undefined : decodeValue(ref.codec, text);
    }) as { [TIndex in keyof TRefs]: TRefs[TIndex] extends AttributeRef<infer TValue> ? TValue | undefined : never };
  }

  /**
   * Reads Attributes until `until` accepts their values, or `timeoutMs`
   * passed, and returns the values read last. It reads again after each
   * commit in this process that wrote one of these Attributes (the committing
   * Worker tells it), at the Flow's end, on the Flow's Stream wake-ups from
   * other processes (where the store has wake-ups) and at least every poll
   * interval. A commit in this process that wrote all of them is judged
   * first: `until` is called with the values it wrote (so `until` must be a
   * plain predicate). When `until` accepts them and the Worker sent that
   * commit after the Client's last read returned, they are the result: they
   * held at a moment of the wait. Otherwise the Client reads again. The
   * values returned always held at a moment after the call began.
   * Throws `FlowNotFoundError` when no Flow has the ID.
   *
   * @example
   * const [state] = await client.waitForAttributes("session-1", [flow.agentState], ([state]) => state?.activeTurnId === null, { timeoutMs: 60_000 });
   */
  async waitForAttributes<const TRefs extends readonly AttributeRef<unknown>[]>(
    flowId: string,
    refs: TRefs,
    until: (values: { [TIndex in keyof TRefs]: TRefs[TIndex] extends AttributeRef<infer TValue> ? TValue | undefined : never }) => boolean,
    options: WaitForFlowOptions = {},
  ): Promise<{ [TIndex in keyof TRefs]: TRefs[TIndex] extends AttributeRef<infer TValue> ? TValue | undefined : never }> {
    checkFlowId(flowId);
    const timeoutMs = options.timeoutMs ?? 30_000;
    if (typeof timeoutMs !== "number" || !(timeoutMs >= 0)) throw new InvalidInputError(`waitForAttributes timeoutMs ${describeValue(options.timeoutMs)} is invalid: use a number of milliseconds, 0 or more`);
    const names = new Set(refs.map((ref) => ref.name));
    type Values = { [TIndex in keyof TRefs]: TRefs[TIndex] extends AttributeRef<infer TValue> ? TValue | undefined : never };
    // A local commit that wrote every ref gives the values a read right after it would see (or older ones).
    const fromWrites = (values: readonly WrittenValue[]): WrittenVerdict<Values> => {
      const texts = refs.map((ref) => values.find((value) => value.name === ref.name && value.key === ref.key));
      if (texts.every((text) => text === undefined)) return "unchanged";
      if (texts.some((text) => text === undefined)) return undefined;
      return { result: refs.map((ref, index) => {
        const text = texts[index]!.value;
        return text === null ? undefined : decodeValue(ref.codec, text);
      }) as Values };
    };
    return waitForChange(this.store, flowId, { timeoutMs, signal: options.signal, names, fromWrites }, () => this.getAttributes(flowId, ...refs), until);
  }

  /**
   * Reads a Flow's Attributes on one consistent view: every value `work`
   * reads comes from the same committed state, never half of a commit.
   * Reading never writes or locks what Workers use.
   *
   * @example
   * const { state, messages } = await client.readFlowState(id, async (view) => ({
   *   state: await view.get(flow.agentState),
   *   messages: await view.list(flow.agentMessages, { limit: 50 }),
   * }));
   */
  async readFlowState<TResult>(flowId: string, work: (reader: FlowStateReader) => Promise<TResult>): Promise<TResult> {
    checkFlowId(flowId);
    return this.read(async (transaction) => {
      if ((await transaction.lockFlow(flowId)) === undefined) throw new FlowNotFoundError(`no Flow has ID ${describeValue(flowId)}`);
      return work({
        get: async (ref) => {
          const text = await transaction.readAttribute(flowId, ref.name, ref.key);
          return text === undefined ? undefined : decodeValue(ref.codec, text);
        },
        list: async (map, range = {}) => {
          const limit = range.limit ?? 10_000;
          if (!Number.isSafeInteger(limit) || limit < 1) throw new InvalidInputError(`readFlowState list limit ${describeValue(range.limit)} is invalid: use a positive integer`);
          const rows = await transaction.readAttributeRange(flowId, map.name, { ...range, limit });
          return rows.map((row) => ({ key: row.key, value: decodeValue(map.codec, row.value) }));
        },
      });
    });
  }

  /** Status, input, output and unfinished executions of a Flow instance. */
  async describe(flowId: string): Promise<FlowDescription> {
    checkFlowId(flowId);
    const read = this.store.oneRequest !== undefined
      ? await this.store.oneRequest.readFlow(flowId)
      : await this.read(async (transaction): Promise<FlowRead | undefined> => {
        const flow = await transaction.lockFlow(flowId);
        return flow === undefined ? undefined : { flow, executions: await transaction.listExecutions(flowId) };
      });
    if (read === undefined) throw new FlowNotFoundError(`no Flow has ID ${describeValue(flowId)}`);
    return descriptionOf(read.flow, read.executions);
  }

  /**
   * Waits until a Flow instance is no longer running, or `timeoutMs` passed,
   * and describes it then; its `status` says which. Ends are announced to
   * this process at once (and to others through the store's wake-ups, where
   * it has them); the store's poll interval bounds a missed one.
   *
   * @example
   * await client.start(orderFlow, "order-1", input);
   * const { status, output } = await client.waitForFlow("order-1", { timeoutMs: 60_000 });
   */
  async waitForFlow(flowId: string, options: WaitForFlowOptions = {}): Promise<FlowDescription> {
    checkFlowId(flowId);
    const timeoutMs = options.timeoutMs ?? 30_000;
    if (typeof timeoutMs !== "number" || !(timeoutMs >= 0)) throw new InvalidInputError(`waitForFlow timeoutMs ${describeValue(options.timeoutMs)} is invalid: use a number of milliseconds, 0 or more`);
    // A local wait: the monotonic clock, which no wall-clock jump moves.
    const deadline = performance.now() + timeoutMs;
    // Ends announced so far: one that comes while `describe` runs means look again at once.
    let ends = 0;
    let wakeUp: (() => void) | undefined;
    // The committing Worker of this process hands over the ended Flow where its store lets it: no read then.
    let ended: EndedFlow | undefined;
    const stopListening = onLocalFlowEnd(this.store, flowId, (flow) => {
      ended = flow;
      wakeUp?.();
    });
    const unsubscribe = this.store.subscribe((event) => {
      if (event.kind !== "flow_finished" || event.flowId !== flowId) return;
      ends += 1;
      wakeUp?.();
    });
    try {
      for (;;) {
        // An ended Flow has no executions left: its end cancelled them or was its last one.
        if (ended !== undefined) return descriptionOf(ended, []);
        const endsBefore = ends;
        const description = await this.describe(flowId);
        const left = deadline - performance.now();
        if (description.status !== "running" || left <= 0 || options.signal?.aborted === true) return description;
        if (ends !== endsBefore || ended !== undefined) continue;
        await pauseUntilWoken(Math.min(left, this.store.pollIntervalMs), options.signal, (wake) => (wakeUp = wake));
      }
    } finally {
      unsubscribe();
      stopListening();
    }
  }

  /** Lists Flow instances in flow ID order, optionally of one type or status. */
  async listFlows(filter: { flowType?: string; status?: FlowStatus; afterFlowId?: string; limit?: number } = {}): Promise<{ flowId: string; flowType: string; status: FlowStatus; createdAt: Date; updatedAt: Date }[]> {
    const limit = filter.limit ?? 100;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) throw new InvalidInputError(`listFlows limit ${String(filter.limit)} is invalid: use an integer from 1 to 10000`);
    const rows = await this.read((transaction) => transaction.listFlows({ ...filter, limit }));
    return rows.map((row) => ({ flowId: row.flowId, flowType: row.flowType, status: row.status, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) }));
  }

  /** Reads Stream messages after a resume token, optionally waiting for new ones. */
  readStream<TValue>(flowId: string, ref: StreamDefinition<TValue>, options: ReadStreamOptions = {}): Promise<StreamReadResult<TValue>> {
    checkFlowId(flowId);
    return readStream(this.store, flowId, ref, options);
  }

  /** Follows a Stream from a resume token until the signal aborts. */
  async *followStream<TValue>(flowId: string, ref: StreamDefinition<TValue>, options: { after?: string; signal?: AbortSignal } = {}): AsyncGenerator<StreamMessage<TValue>> {
    let after = options.after;
    while (options.signal?.aborted !== true) {
      const read = await this.readStream(flowId, ref, { ...(after === undefined ? {} : { after }), waitMs: 30_000, ...(options.signal === undefined ? {} : { signal: options.signal }) });
      for (const message of read.messages) yield message;
      after = read.nextToken;
    }
  }

  /** The newest messages of a Stream, oldest first. */
  listStreamMessages<TValue>(flowId: string, ref: StreamDefinition<TValue>, options: { limit?: number } = {}): Promise<StreamMessage<TValue>[]> {
    checkFlowId(flowId);
    return listRecentStreamMessages(this.store, flowId, ref, options.limit ?? 100);
  }

  /** Makes every pending Timer with this ID in the Flow due now; returns how many. */
  async skipTimer(flowId: string, timerId: string): Promise<number> {
    checkFlowId(flowId);
    const now = this.store.clock.now();
    const count = await this.store.transaction(async (transaction) => {
      if ((await transaction.lockFlow(flowId)) === undefined) throw new FlowNotFoundError(`no Flow has ID ${describeValue(flowId)}`);
      const timers = (await transaction.findTimersById(flowId, timerId)).filter((timer) => !timer.fired);
      for (const timer of timers) await transaction.insertTimer({ ...timer, dueAt: Math.min(timer.dueAt, now) });
      return timers.length;
    });
    if (count > 0) this.store.wake({ kind: "timers", dueAt: now });
    return count;
  }

  /** The Flow's retained Step history, oldest first. */
  async getStepHistory(flowId: string, options: { limit?: number } = {}): Promise<StepHistoryEntry[]> {
    checkFlowId(flowId);
    const limit = options.limit ?? 1000;
    const rows = await this.read(async (transaction) => {
      if ((await transaction.lockFlow(flowId)) === undefined) throw new FlowNotFoundError(`no Flow has ID ${describeValue(flowId)}`);
      return transaction.listHistory(flowId, limit);
    });
    return rows.map((row) => ({
      executionId: row.executionId,
      stepType: row.stepType,
      method: row.method,
      status: row.status,
      attempt: row.attempt,
      startedAt: new Date(row.startedAt),
      finishedAt: new Date(row.finishedAt),
      outcome: row.outcome === null ? null : (JSON.parse(row.outcome) as unknown),
      error: row.error,
    }));
  }
}
