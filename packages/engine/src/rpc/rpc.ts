import type { AttributeMapDefinition, AttributeRef } from "../attribute/attribute.ts";
import type { ChannelMessage, ChannelRef } from "../channel/channel.ts";
import { InvalidDefinitionError } from "../errors/invalid-definition-error.ts";
import { validateName } from "../internal/validate-name.ts";
import type { MovementOptions } from "../step/step-options.ts";
import type { FlowStatus } from "../store/flow-status.ts";

/** A Step execution of a Flow instance that has not finished. */
export interface ActiveExecution {
  readonly executionId: string;
  readonly stepType: string;
  readonly status: "waiting_to_be_asked" | "waiting" | "ready" | "running";
}

/**
 * What an RPC handler sees: a consistent snapshot of the Flow instance inside
 * one store transaction. Everything it does commits together, or not at all
 * if it throws.
 */
export interface RpcContext {
  readonly flowId: string;
  readonly flowType: string;
  readonly flowStatus: FlowStatus;
  read<TValue>(ref: AttributeRef<TValue>): Promise<TValue | undefined>;
  /** Writes now, inside the transaction; `null` deletes. */
  write<TValue>(ref: AttributeRef<TValue>, value: TValue | null): Promise<void>;
  /** Keys of the stored instances of a map, in key order. */
  keys(map: AttributeMapDefinition<unknown>, range?: { fromKey?: string; toKey?: string; limit?: number }): Promise<string[]>;
  /** Publishes a message; returns its message ID. */
  publish<TMessage>(ref: ChannelRef<TMessage>, message: TMessage): Promise<string>;
  /** Queued messages, oldest first. */
  listMessages<TMessage>(ref: ChannelRef<TMessage>, options?: { limit?: number }): Promise<ChannelMessage<TMessage>[]>;
  /** Deletes a queued message; throws `ChannelMessageNotFoundError` when it is gone. */
  deleteMessage(ref: ChannelRef<unknown>, messageId: string): Promise<void>;
  /** Starts a Step execution when the RPC commits. */
  moveTo(stepType: string, input?: unknown, options?: MovementOptions): void;
  /** Cancels the active executions of these Step types when the RPC commits, before its movements. */
  cancelSteps(stepTypes: readonly string[]): void;
  /** The executions that have not finished, oldest first. */
  activeExecutions(): Promise<ActiveExecution[]>;
  /**
   * The store's clock, in epoch milliseconds (see `StepContext.now`): compare
   * stored times, such as a deadline a Step wrote, with this, not `Date.now()`.
   */
  now(): number;
}

/** An RPC as declared, before it belongs to a Flow. */
export interface RpcSpec<TInput, TOutput> {
  /** Wire name of the RPC, unique within its Flow. */
  name: string;
  /**
   * Validates and converts the raw input; throw to refuse it. The engine wraps
   * what it throws in `InvalidInputError` naming the RPC.
   * @default accepts any JSON value
   */
  parseInput?: (input: unknown) => TInput;
  /**
   * Attributes the RPC must find unlocked; when a running Step method holds
   * one, the call fails fast with `RpcLockConflictError`.
   * @default []
   */
  locks?: readonly AttributeRef<unknown>[];
  /** Short, no I/O of its own: it runs inside the store transaction. */
  handler: (context: RpcContext, input: TInput) => Promise<TOutput> | TOutput;
  /**
   * For an RPC whose usual call only publishes: what that call publishes
   * and returns, decided from the input and the store's clock alone, or
   * undefined when this call needs `handler`. A store that offers it
   * (PostgreSQL) then publishes in one request, and only while the Flow runs,
   * the RPC's `locks` are free and `room` holds; in every other case, on
   * other stores, and when this throws, `handler` runs in a transaction as
   * usual. So `handler` must do exactly what the plan says whenever those
   * conditions hold; a Flow that declares both should test that both leave
   * the same rows.
   * @default none: `handler` always runs
   */
  publishes?: (context: RpcPlanContext, input: TInput) => RpcPublishPlan<TOutput> | undefined;
}

/** What {@link RpcSpec.publishes} sees: no store reads, only the Flow's ID and the store's clock. */
export interface RpcPlanContext {
  readonly flowId: string;
  readonly flowType: string;
  /** The store's clock, in epoch milliseconds (see `RpcContext.now`). */
  now(): number;
}

/** What an RPC publishes and returns when it runs as one store request (see {@link RpcSpec.publishes}). */
export interface RpcPublishPlan<TOutput> {
  /** Published in order, as `RpcContext.publish` would. */
  messages: readonly { channel: ChannelRef<unknown>; message: unknown }[];
  /** What the RPC returns once they are published. */
  output: TOutput;
  /**
   * A bound the handler enforces: publish only while the messages queued on
   * `channels` plus these number at most `maxMessages`, and the UTF-8 bytes
   * of their stored JSON's top-level string `field` total at most
   * `maxBytes`. When it does not hold, `handler` runs (and refuses).
   * @default no bound
   */
  room?: { channels: readonly ChannelRef<unknown>[]; maxMessages: number; maxBytes: number; field: string };
}

/**
 * Declares an RPC for a Flow's `rpcs`.
 *
 * @example
 * const deposit = rpc({
 *   name: "deposit",
 *   parseInput: (raw) => z.object({ amount: z.number() }).parse(raw),
 *   handler: async (ctx, { amount }) => {
 *     const balance = (await ctx.read(flow.balance)) ?? 0;
 *     await ctx.write(flow.balance, balance + amount);
 *     return balance + amount;
 *   },
 * });
 */
export function rpc<TInput = undefined, TOutput = unknown>(spec: RpcSpec<TInput, TOutput>): NoInfer<RpcSpec<TInput, TOutput>> {
  validateName("RPC", spec.name);
  if (typeof spec.handler !== "function") {
    throw new InvalidDefinitionError(`RPC ${spec.name} has no handler function`);
  }
  return spec;
}
