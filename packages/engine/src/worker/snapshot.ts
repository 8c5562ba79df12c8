import type { AttributeRef } from "../attribute/attribute.ts";
import type { ChannelMessage, ChannelRef } from "../channel/channel.ts";
import { UnloadedStateError } from "../errors/unloaded-state-error.ts";
import type { FlowCore } from "../flow/flow.ts";
import { decodeValue } from "../internal/encode.ts";
import type { PlainAttributeReader, StoredLoad } from "../step/step-options.ts";
import { methodLoadOf, storedLoad, type StepMethodName } from "../step/step-options.ts";
import type { AttributeRow, MessageRow, StoreTransaction } from "../store/store.ts";
import type { LoadedSelection } from "../store/step-commit.ts";
import type { StepDefinition } from "../step/step.ts";

function slot(name: string, key: string): string {
  return `${name}\u0000${key}`;
}

interface LoadedRange {
  fromKey: string;
  /** Exclusive end of coverage, or undefined for unbounded. */
  toKey: string | undefined;
  /** Inclusive last key covered when a limit cut the range short. */
  lastKey: string | undefined;
}

/**
 * The state one attempt sees: plain Attributes, the map instances and Channel
 * contents it selected, all read in the claiming transaction.
 */
export class Snapshot implements PlainAttributeReader {
  private readonly values = new Map<string, string>();
  private readonly instances = new Set<string>();
  private readonly ranges = new Map<string, LoadedRange[]>();
  private readonly channels = new Map<string, MessageRow[]>();
  /**
   * Keys of the loaded instances that hold values, by map name, in key
   * order: built on the first {@link Snapshot.loadedKeys} call. A snapshot
   * is filled while it is built and never changes after, so the index stays
   * right; building it scans the values once instead of on every call.
   */
  private keysByName: Map<string, readonly string[]> | undefined;
  private readonly flow: FlowCore;

  constructor(flow: FlowCore) {
    this.flow = flow;
  }

  /** A snapshot of plain Attributes only, read by the store along with a claim, for a Step that selects nothing else. */
  static ofPlainAttributes(flow: FlowCore, rows: readonly { name: string; value: string }[]): Snapshot {
    const snapshot = new Snapshot(flow);
    for (const row of rows) snapshot.values.set(slot(row.name, ""), row.value);
    return snapshot;
  }

  /** Reads plain Attributes and everything the Step (and its movement) selects. */
  static async load(
    transaction: StoreTransaction,
    flow: FlowCore,
    flowId: string,
    step: StepDefinition<unknown>,
    method: StepMethodName,
    input: unknown,
    extraLoads: readonly StoredLoad[],
  ): Promise<Snapshot> {
    const snapshot = new Snapshot(flow);
    for (const row of await transaction.readPlainAttributes(flowId)) snapshot.values.set(slot(row.name, ""), row.value);
    for (const load of Snapshot.selectedLoads(step, method, input, snapshot, extraLoads)) await snapshot.loadOne(transaction, flowId, load);
    return snapshot;
  }

  /**
   * The loads a Step method selects (the Step's `load` option, or
   * `waitUntilLoad` for `waitUntil` when given, evaluated against `plain`
   * when it is a function) and its movement adds, in the order
   * {@link Snapshot.load} reads them; a load the movement repeats (as one
   * that carries its Step's selection does) is read once.
   */
  static selectedLoads(step: StepDefinition<unknown>, method: StepMethodName, input: unknown, plain: Snapshot, extraLoads: readonly StoredLoad[]): StoredLoad[] {
    const load = methodLoadOf(step.options, method);
    const selected = typeof load === "function" ? load(input, plain) : (load ?? []);
    const loads = selected.map(storedLoad);
    if (extraLoads.length === 0) return loads;
    const seen = new Set(loads.map((load) => JSON.stringify(load)));
    for (const load of extraLoads) {
      const key = JSON.stringify(load);
      if (seen.has(key)) continue;
      seen.add(key);
      loads.push(load);
    }
    return loads;
  }

  /** A snapshot from plain Attributes and each load's result, read at one moment (see `OneRequestOperations.readSelection`). */
  static ofLoaded(flow: FlowCore, plain: readonly AttributeRow[], loads: readonly StoredLoad[], results: readonly LoadedSelection[]): Snapshot {
    const snapshot = Snapshot.ofPlainAttributes(flow, plain);
    loads.forEach((load, index) => snapshot.apply(load, results[index]));
    return snapshot;
  }

  /** Whether this snapshot's values are exactly these plain Attributes (a snapshot of plain Attributes only). */
  holdsPlainAttributes(rows: readonly AttributeRow[]): boolean {
    return this.values.size === rows.length && rows.every((row) => this.values.get(slot(row.name, "")) === row.value);
  }

  private async loadOne(transaction: StoreTransaction, flowId: string, load: StoredLoad): Promise<void> {
    switch (load.kind) {
      case "instance":
        if (load.key === "") return;
        this.apply(load, await transaction.readAttribute(flowId, load.name, load.key));
        return;
      case "range":
        this.apply(load, await transaction.readAttributeRange(flowId, load.name, load));
        return;
      case "channel":
        this.apply(load, await transaction.listMessages(flowId, load.name, load.key));
        return;
    }
  }

  /** Records one load's result: an instance's value (undefined when unset), a range's rows, or a Channel's messages. */
  private apply(load: StoredLoad, result: LoadedSelection | undefined): void {
    switch (load.kind) {
      case "instance": {
        if (load.key === "") return;
        this.instances.add(slot(load.name, load.key));
        if (typeof result === "string") this.values.set(slot(load.name, load.key), result);
        return;
      }
      case "range": {
        const rows = (Array.isArray(result) ? result : []) as AttributeRow[];
        for (const row of rows) this.values.set(slot(row.name, row.key), row.value);
        const cut = load.limit !== undefined && rows.length >= load.limit;
        const ranges = this.ranges.get(load.name) ?? [];
        ranges.push({ fromKey: load.fromKey ?? "", toKey: load.toKey, lastKey: cut ? rows.at(-1)?.key : undefined });
        this.ranges.set(load.name, ranges);
        return;
      }
      case "channel":
        this.channels.set(slot(load.name, load.key), (Array.isArray(result) ? result : []) as MessageRow[]);
        return;
    }
  }

  private covers(name: string, key: string): boolean {
    if (key === "" || this.instances.has(slot(name, key))) return true;
    return (this.ranges.get(name) ?? []).some((range) =>
      key >= range.fromKey && (range.toKey === undefined || key < range.toKey) && (range.lastKey === undefined || key <= range.lastKey));
  }

  /** The stored text of an Attribute or instance; throws when it was not loaded. */
  text(ref: AttributeRef<unknown>): string | undefined {
    if (!this.covers(ref.name, ref.key)) {
      throw new UnloadedStateError(
        `${ref.name}[${JSON.stringify(ref.key)}] of Flow ${this.flow.flowType} was not loaded for this Step; add it to the Step's load option (or the movement's)`,
      );
    }
    return this.values.get(slot(ref.name, ref.key));
  }

  read<TValue>(ref: AttributeRef<TValue>): TValue | undefined {
    const text = this.text(ref as AttributeRef<unknown>);
    return text === undefined ? undefined : decodeValue(ref.codec, text);
  }

  /** Keys of loaded instances of a map that hold values, in key order; the caller owns the array. */
  loadedKeys(name: string): string[] {
    return [...this.sortedKeys(name)];
  }

  /** {@link Snapshot.loadedKeys} without the copy: the snapshot's own array, which the caller must not change. */
  sortedKeys(name: string): readonly string[] {
    if (this.keysByName === undefined) {
      const byName = new Map<string, string[]>();
      for (const entry of this.values.keys()) {
        const separator = entry.indexOf("\u0000");
        // Plain Attributes (an empty key) are not map instances.
        if (separator < 0 || separator === entry.length - 1) continue;
        const mapName = entry.slice(0, separator);
        const keys = byName.get(mapName);
        if (keys === undefined) byName.set(mapName, [entry.slice(separator + 1)]);
        else keys.push(entry.slice(separator + 1));
      }
      for (const keys of byName.values()) keys.sort();
      this.keysByName = byName;
    }
    return this.keysByName.get(name) ?? [];
  }

  pendingMessages<TMessage>(ref: ChannelRef<TMessage>): ChannelMessage<TMessage>[] {
    const rows = this.channels.get(slot(ref.name, ref.key));
    if (rows === undefined) {
      throw new UnloadedStateError(`Channel ${ref.name}[${JSON.stringify(ref.key)}] of Flow ${this.flow.flowType} was not loaded for this Step; add it to the Step's load option`);
    }
    return rows.map((row) => ({ messageId: row.messageId, message: decodeValue(ref.codec, row.value), publishedAt: new Date(row.publishedAt) }));
  }
}
