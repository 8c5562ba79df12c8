import type { AttributeMapDefinition, AttributeRef } from "../attribute/attribute.ts";
import type { ChannelMessage, ChannelRef } from "../channel/channel.ts";
import { InvalidDefinitionError } from "../errors/invalid-definition-error.ts";
import type { FlowCore } from "../flow/flow.ts";
import { decodeValue, encodeValue } from "../internal/encode.ts";
import type { RecoveryError } from "../step/recovery-error.ts";
import type { ExecuteContext } from "../step/step-context.ts";
import type { StoredWaitResult } from "../step/stored-conditions.ts";
import type { StreamDefinition } from "../stream/stream.ts";
import type { Snapshot } from "./snapshot.ts";

/** A staged Attribute write or Channel publish, already encoded. */
export interface StagedWrite {
  name: string;
  key: string;
  value: string | null;
}

/** What the Worker gives an attempt besides its snapshot. */
export interface AttemptServices {
  flow: FlowCore;
  flowId: string;
  stepType: string;
  executionId: string;
  attempt: number;
  deadline: Date;
  signal: AbortSignal;
  checkpoint: string | undefined;
  recoveryError: RecoveryError | undefined;
  waitResult: StoredWaitResult | undefined;
  maxValueBytes: number;
  /** The store's clock. */
  now(): number;
  heartbeat(checkpoint: string | undefined): Promise<void>;
  writeStream(stream: string, capacityBytes: number, value: string): Promise<void>;
}

/** The context of one attempt: snapshot reads, staged writes and publishes. */
export class AttemptContext implements ExecuteContext {
  readonly flowId: string;
  readonly flowType: string;
  readonly stepType: string;
  readonly executionId: string;
  readonly attempt: number;
  readonly cancellationSignal: AbortSignal;
  readonly deadline: Date;
  readonly heartbeatCheckpoint: string | undefined;
  readonly recoveryError: RecoveryError | undefined;
  /** Attribute writes by `name\0key`, last write wins. */
  readonly writes = new Map<string, StagedWrite>();
  readonly publishes: StagedWrite[] = [];
  private readonly snapshot: Snapshot;
  private readonly services: AttemptServices;

  constructor(snapshot: Snapshot, services: AttemptServices) {
    this.snapshot = snapshot;
    this.services = services;
    this.flowId = services.flowId;
    this.flowType = services.flow.flowType;
    this.stepType = services.stepType;
    this.executionId = services.executionId;
    this.attempt = services.attempt;
    this.cancellationSignal = services.signal;
    this.deadline = services.deadline;
    this.heartbeatCheckpoint = services.checkpoint;
    this.recoveryError = services.recoveryError;
  }

  private checkDeclared(name: string, kinds: readonly string[]): void {
    const kind = this.services.flow.persistenceByName.get(name)?.kind;
    if (kind === undefined || !kinds.includes(kind)) {
      throw new InvalidDefinitionError(`Flow ${this.flowType} declares no ${kinds.join(" or ")} named ${name}; add it to the Flow's persistence`);
    }
  }

  read<TValue>(ref: AttributeRef<TValue>): TValue | undefined {
    const staged = this.writes.get(`${ref.name}\u0000${ref.key}`);
    if (staged !== undefined) return staged.value === null ? undefined : decodeValue(ref.codec, staged.value);
    return this.snapshot.read(ref);
  }

  write<TValue>(ref: AttributeRef<TValue>, value: TValue | null): void {
    this.checkDeclared(ref.name, ref.key === "" ? ["attribute"] : ["attribute_map"]);
    const encoded = value === null ? null : encodeValue(`Attribute ${ref.name}${ref.key === "" ? "" : `[${ref.key}]`}`, ref.codec, value, this.services.maxValueBytes);
    this.writes.set(`${ref.name}\u0000${ref.key}`, { name: ref.name, key: ref.key, value: encoded });
  }

  loadedKeys(map: AttributeMapDefinition<unknown>): string[] {
    const loaded = this.snapshot.sortedKeys(map.name);
    let staged: StagedWrite[] | undefined;
    for (const write of this.writes.values()) {
      if (write.name === map.name && write.key !== "") (staged ??= []).push(write);
    }
    // Nothing staged for this map: the snapshot's keys, already in order.
    if (staged === undefined) return [...loaded];
    const keys = new Set(loaded);
    for (const write of staged) {
      if (write.value === null) keys.delete(write.key);
      else keys.add(write.key);
    }
    return [...keys].sort();
  }

  publish<TMessage>(ref: ChannelRef<TMessage>, message: TMessage): void {
    this.checkDeclared(ref.name, ref.key === "" ? ["channel"] : ["channel_map"]);
    const encoded = encodeValue(`message to Channel ${ref.name}`, ref.codec, message, this.services.maxValueBytes);
    this.publishes.push({ name: ref.name, key: ref.key, value: encoded });
  }

  pendingMessages<TMessage>(ref: ChannelRef<TMessage>): ChannelMessage<TMessage>[] {
    return this.snapshot.pendingMessages(ref);
  }

  now(): number {
    return this.services.now();
  }

  consumed<TMessage>(ref: ChannelRef<TMessage>): ChannelMessage<TMessage>[] {
    return (this.services.waitResult?.messages ?? [])
      .filter((message) => message.name === ref.name && message.key === ref.key)
      .map((message) => ({ messageId: message.messageId, message: decodeValue(ref.codec, message.value), publishedAt: new Date(message.publishedAt) }));
  }

  timerFired(timerId: string): boolean {
    return this.services.waitResult?.firedTimers.includes(timerId) ?? false;
  }

  async writeStream<TValue>(ref: StreamDefinition<TValue>, value: TValue): Promise<void> {
    this.checkDeclared(ref.name, ["stream"]);
    await this.services.writeStream(ref.name, ref.capacityBytes, encodeValue(`Stream ${ref.name} message`, ref.codec, value, this.services.maxValueBytes));
  }

  async heartbeat(checkpoint?: string): Promise<void> {
    await this.services.heartbeat(checkpoint);
  }
}
