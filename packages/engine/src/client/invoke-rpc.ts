import { describeValue } from "../errors/describe-value.ts";
import type { AttributeMapDefinition, AttributeRef } from "../attribute/attribute.ts";
import type { ChannelMessage, ChannelRef } from "../channel/channel.ts";
import type { RpcPublish, RpcPublishReply } from "../store/step-commit.ts";
import { claimCatalogFor, jsonbRefuses, readyTotalsOf } from "../worker/one-request-commit.ts";
import { attemptsOfClaimReply, claimInTransaction, markClaimBoundary, type ClaimedAttempt } from "../worker/claim-tasks.ts";
import { claimLocally, type LocalClaimProgress } from "../worker/local-handover.ts";
import { ChannelMessageNotFoundError } from "../errors/channel-message-not-found-error.ts";
import { FlowNotFoundError } from "../errors/flow-not-found-error.ts";
import { InvalidDefinitionError } from "../errors/invalid-definition-error.ts";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import { RpcLockConflictError } from "../errors/rpc-lock-conflict-error.ts";
import { FlowTransaction } from "../flow/flow-transaction.ts";
import { jsonCodec } from "../internal/codec.ts";
import { durableBoundary } from "../internal/durable-boundary.ts";
import { decodeValue, encodeValue } from "../internal/encode.ts";
import { stepOf } from "../step/execution-options.ts";
import { lockName, storedMovementOptions, type MovementOptions } from "../step/step-options.ts";
import type { Store } from "../store/store.ts";
import type { FlowCore, RpcReference } from "../flow/flow.ts";
import type { ActiveExecution, RpcContext } from "../rpc/rpc.ts";
import type { ResolvedInvokeRpcOptions } from "./invoke-rpc-options.ts";
import type { StoreClock } from "../store/store-clock.ts";

function parseRpcInput<TInput>(reference: RpcReference<TInput, unknown>, input: unknown): TInput {
  if (reference.parseInput === undefined) return input as TInput;
  try {
    return reference.parseInput(input);
  } catch (error) {
    throw new InvalidInputError(
      `input ${JSON.stringify(input)?.slice(0, 200)} of RPC ${reference.name} on Flow type ${reference.flowType} is invalid: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

class TransactionalRpcContext implements RpcContext {
  readonly flowId: string;
  readonly flowType: string;
  readonly flowStatus;
  readonly movements: { stepType: string; input: unknown; options: MovementOptions | undefined }[] = [];
  readonly cancellations: string[] = [];
  private readonly flowTransaction: FlowTransaction;
  private readonly maxValueBytes: number;

  private readonly clock: StoreClock;

  constructor(flowTransaction: FlowTransaction, maxValueBytes: number, clock: StoreClock) {
    this.flowTransaction = flowTransaction;
    this.maxValueBytes = maxValueBytes;
    this.clock = clock;
    this.flowId = flowTransaction.flowId;
    this.flowType = flowTransaction.flow.flowType;
    this.flowStatus = flowTransaction.row.status;
  }

  private checkDeclared(name: string, kinds: readonly string[]): void {
    const kind = this.flowTransaction.flow.persistenceByName.get(name)?.kind;
    if (kind === undefined || !kinds.includes(kind)) {
      throw new InvalidDefinitionError(`Flow ${this.flowType} declares no ${kinds.join(" or ")} named ${name}`);
    }
  }

  async read<TValue>(ref: AttributeRef<TValue>): Promise<TValue | undefined> {
    const text = await this.flowTransaction.transaction.readAttribute(this.flowId, ref.name, ref.key);
    return text === undefined ? undefined : decodeValue(ref.codec, text);
  }

  async write<TValue>(ref: AttributeRef<TValue>, value: TValue | null): Promise<void> {
    this.checkDeclared(ref.name, ref.key === "" ? ["attribute"] : ["attribute_map"]);
    const encoded = value === null ? null : encodeValue(`Attribute ${ref.name}`, ref.codec, value, this.maxValueBytes);
    await this.flowTransaction.writeAttribute(ref.name, ref.key, encoded);
  }

  async keys(map: AttributeMapDefinition<unknown>, range: { fromKey?: string; toKey?: string; limit?: number } = {}): Promise<string[]> {
    return (await this.flowTransaction.transaction.readAttributeRange(this.flowId, map.name, range)).map((row) => row.key);
  }

  async publish<TMessage>(ref: ChannelRef<TMessage>, message: TMessage): Promise<string> {
    this.checkDeclared(ref.name, ref.key === "" ? ["channel"] : ["channel_map"]);
    return this.flowTransaction.publish(ref.name, ref.key, encodeValue(`message to Channel ${ref.name}`, ref.codec, message, this.maxValueBytes));
  }

  async listMessages<TMessage>(ref: ChannelRef<TMessage>, options: { limit?: number } = {}): Promise<ChannelMessage<TMessage>[]> {
    const rows = await this.flowTransaction.transaction.listMessages(this.flowId, ref.name, ref.key, options.limit);
    return rows.map((row) => ({ messageId: row.messageId, message: decodeValue(ref.codec, row.value), publishedAt: new Date(row.publishedAt) }));
  }

  async deleteMessage(ref: ChannelRef<unknown>, messageId: string): Promise<void> {
    const queued = await this.flowTransaction.transaction.listMessages(this.flowId, ref.name, ref.key);
    if (!queued.some((row) => row.messageId === messageId) || !(await this.flowTransaction.deleteMessage(messageId))) {
      throw new ChannelMessageNotFoundError(`message ${messageId} is no longer queued on Channel ${ref.name} of Flow ${this.flowId}`);
    }
  }

  moveTo(stepType: string, input?: unknown, options?: MovementOptions): void {
    stepOf(this.flowTransaction.flow, stepType);
    this.movements.push({ stepType, input: input ?? null, options });
  }

  cancelSteps(stepTypes: readonly string[]): void {
    for (const stepType of stepTypes) stepOf(this.flowTransaction.flow, stepType);
    this.cancellations.push(...stepTypes);
  }

  now(): number {
    return this.clock.now();
  }

  async activeExecutions(): Promise<ActiveExecution[]> {
    return (await this.flowTransaction.transaction.listExecutions(this.flowId)).map((row) => ({
      executionId: row.executionId,
      stepType: row.stepType,
      status: row.claimedBy !== null ? "running" : row.status === "asking" ? "waiting_to_be_asked" : row.status,
    }));
  }
}

/**
 * Runs an RPC in one store transaction: lock check, handler, cancellations,
 * movements, condition matching. Anything thrown rolls everything back.
 */
export async function invokeRpc<TInput, TOutput>(
  store: Store,
  reference: RpcReference<TInput, TOutput>,
  flowId: string,
  rawInput: unknown,
  options: ResolvedInvokeRpcOptions,
): Promise<TOutput> {
  if (reference?.kind !== "rpc") throw new InvalidInputError(`invokeRPC needs an RPC reference from a Flow definition; got ${describeValue(reference)}`);
  const input = parseRpcInput(reference, rawInput);
  const deadline = performance.now() + options.lockConflictRetryMs;
  for (let pauseMs = firstLockConflictPauseMs; ; pauseMs = Math.min(pauseMs * 2, maxLockConflictPauseMs)) {
    try {
      return await invokeOnce(store, reference, flowId, input);
    } catch (error) {
      const remainingMs = deadline - performance.now();
      if (!RpcLockConflictError.isInstance(error) || remainingMs <= 0 || options.signal?.aborted === true) throw error;
      const stopped = await pause(Math.min(pauseMs, remainingMs), options.signal);
      if (stopped) throw error;
    }
  }
}

/** The first pause before calling again after a lock conflict; it doubles up to {@link maxLockConflictPauseMs}. */
const firstLockConflictPauseMs = 5;
const maxLockConflictPauseMs = 50;

/** Waits `delayMs`; true when `signal` aborted first. */
function pause(delayMs: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(false);
    }, delayMs);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * An RPC's planned publishes as one store request (`RpcSpec.publishes`,
 * `OneRequestOperations.publishRpc`); undefined when the store, the plan or
 * the Flow's state leaves the call to the handler's transaction.
 */
async function publishInOneRequest<TInput, TOutput>(store: Store, reference: RpcReference<TInput, TOutput>, flowId: string, input: TInput): Promise<{ output: TOutput } | undefined> {
  const publishRpc = store.oneRequest?.publishRpc;
  if (reference.publishes === undefined || publishRpc === undefined) return undefined;
  const flow: FlowCore = reference.flow;
  const now = store.clock.now();
  let request: RpcPublish;
  let output: TOutput;
  try {
    const plan = reference.publishes({ flowId, flowType: flow.flowType, now: () => store.clock.now() }, input);
    if (plan === undefined) return undefined;
    const declared = (ref: ChannelRef<unknown>): boolean => flow.persistenceByName.get(ref.name)?.kind === (ref.key === "" ? "channel" : "channel_map");
    if (!plan.messages.every((planned) => declared(planned.channel))) return undefined;
    const publishes = plan.messages.map((planned) => ({
      name: planned.channel.name,
      key: planned.channel.key,
      value: encodeValue(`message to Channel ${planned.channel.name}`, planned.channel.codec, planned.message, store.maxValueBytes),
    }));
    const room = plan.room === undefined ? null : {
      channels: plan.room.channels.map((channel) => ({ name: channel.name, key: channel.key })),
      maxMessages: plan.room.maxMessages,
      maxBytes: plan.room.maxBytes,
      field: plan.room.field,
    };
    request = {
      flowId, flowType: flow.flowType, now, lockNames: (reference.locks ?? []).map(lockName), publishes,
      readyTotals: readyTotalsOf(flow), historyKeep: flow.historyRetention, room,
    };
    output = plan.output;
  } catch {
    // The handler reports what the plan refused, as it always does.
    return undefined;
  }
  // A string the store's JSON cannot hold (U+0000, a lone surrogate): the handler's transaction stores it as text.
  if (jsonbRefuses(JSON.stringify(request))) return undefined;
  durableBoundary("rpc.before-commit", flowId, reference.name);
  const operations = store.oneRequest;
  const local = operations?.claimsInRpcs === true ? await claimLocally(store, flow) : undefined;
  const reply = local === undefined || operations === undefined ? await publishRpc(request) : await local.run<RpcPublishReply>(async (progress) => {
    // What the RPC readies is claimed in its own request for this process's Worker, as that Worker's claims would.
    const { flowTypes, catalog } = claimCatalogFor(local.flows, operations);
    progress.committing();
    const published = await publishRpc({ ...request, claim: { workerId: local.workerId, now, claim: { flowTypes, catalog, limit: 1 } } });
    progress.committed(published);
    return published.outcome === "published" && published.claimed !== undefined ? attemptsOfClaimReply(store, local.flows, local.workerId, published.claimed, now) : [];
  });
  if (reply.outcome !== "published") return undefined;
  // As FlowTransaction.announce: a wait the publishes completed is a task, claimable now.
  if (reply.readied && reply.woken !== true) store.wake({ kind: "tasks", at: now });
  return { output };
}

/** One attempt of an RPC: one store request for planned publishes, else one store transaction. */
async function invokeOnce<TInput, TOutput>(store: Store, reference: RpcReference<TInput, TOutput>, flowId: string, input: TInput): Promise<TOutput> {
  const published = await publishInOneRequest(store, reference, flowId, input);
  if (published !== undefined) return published.output;
  // On an embedded store, where a transaction costs no round trip, what the RPC readies is claimed in its
  // transaction for this process's Worker: that saves the Worker's own claim transaction (and its sync).
  const local = store.oneRequest?.embedded === true ? await claimLocally(store, reference.flow) : undefined;
  if (local === undefined) return (await runRpcTransaction(store, reference, flowId, input, undefined)).output;
  const result = await local.run<RpcTransactionResult<TOutput>>(async (progress) => {
    const ran = await runRpcTransaction(store, reference, flowId, input, { ...local, progress });
    progress.committed(ran);
    return ran.claims;
  });
  return result.output;
}

interface RpcTransactionResult<TOutput> {
  output: TOutput;
  /** What the transaction claimed for a local Worker. */
  claims: readonly ClaimedAttempt[];
}

/** The RPC's handler in one store transaction; with `local`, it also claims one task for that Worker when the RPC readied one. */
async function runRpcTransaction<TInput, TOutput>(
  store: Store,
  reference: RpcReference<TInput, TOutput>,
  flowId: string,
  input: TInput,
  local: { workerId: string; flows: ReadonlyMap<string, FlowCore>; progress: LocalClaimProgress<RpcTransactionResult<TOutput>> } | undefined,
): Promise<RpcTransactionResult<TOutput>> {
  const flow: FlowCore = reference.flow;
  const now = store.clock.now();
  const result = await store.transaction(async (transaction) => {
    const flowTransaction = await FlowTransaction.open(transaction, flow, flowId, now);
    if (flowTransaction === undefined || flowTransaction.row.flowType !== flow.flowType) {
      throw new FlowNotFoundError(`no ${flow.flowType} Flow has ID ${describeValue(flowId)}`);
    }
    const lockNames = (reference.locks ?? []).map(lockName);
    const held = await transaction.heldLocks(flowId, lockNames);
    if (held.length > 0) {
      throw new RpcLockConflictError(`RPC ${reference.name} on Flow ${flowId} needs ${held.join(", ")}, held by a running Step; retry shortly`);
    }
    const context = new TransactionalRpcContext(flowTransaction, store.maxValueBytes, store.clock);
    const output = await reference.handler(context, input);
    if (context.cancellations.length > 0) await flowTransaction.cancelStepTypes(context.cancellations);
    for (const movement of context.movements) {
      await flowTransaction.schedule({
        stepType: movement.stepType,
        input: encodeValue(`input of Step ${movement.stepType}`, jsonCodec, movement.input as never, store.maxValueBytes),
        options: movement.options === undefined ? null : storedMovementOptions(movement.options),
        recoveryError: null,
      });
    }
    await flowTransaction.close();
    const taskAt = flowTransaction.earliestTask;
    const claimed = local !== undefined && taskAt !== undefined && taskAt <= now ? await claimInTransaction(transaction, local.flows, local.workerId, 1, now) : undefined;
    durableBoundary("rpc.before-commit", flowId, reference.name);
    local?.progress.committing();
    return { output, flowTransaction, claimed };
  });
  const { flowTransaction, claimed } = result;
  if (claimed !== undefined) markClaimBoundary("worker.claim.after-commit", claimed);
  for (const changed of claimed?.changed ?? []) changed.announce(store);
  // Nothing to wake for what is claimable now when the claim took it all.
  flowTransaction.announce(store, { tasks: !(claimed !== undefined && claimed.claims.length > 0 && claimed.claimedAll === true) });
  return { output: result.output, claims: claimed?.claims ?? [] };
}
