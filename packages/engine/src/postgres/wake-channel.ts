import { randomUUID } from "node:crypto";
import pg from "pg";
import type { WakeEvent } from "../store/store.ts";

/** How a wake event travels through NOTIFY: the sending store's ID and the event. */
interface WakePayload {
  origin: string;
  event: WakeEvent;
}

export interface WakeChannelOptions {
  /** Connection settings of the dedicated listening connection. */
  connection: pg.ClientConfig;
  /** The NOTIFY channel, shared by every store on the same schema. */
  channel: string;
  /** Sends NOTIFYs (through the store's pool). */
  notify(channel: string, payloads: string[]): Promise<void>;
  /** Gets events other stores sent, and synthetic ones after a reconnect. */
  deliver(event: WakeEvent): void;
  onError(error: unknown): void;
}

/** A `tasks` event for tasks claimable since forever, so Workers look now. */
export const lookNow: WakeEvent = { kind: "tasks", at: 0 };

const reconnectDelaysMs = [50, 100, 250, 500, 1000, 2000, 5000];

function isWakeEvent(value: unknown): value is WakeEvent {
  if (typeof value !== "object" || value === null) return false;
  const kind = (value as { kind?: unknown }).kind;
  return kind === "tasks" || kind === "timers" || kind === "stream" || kind === "executions_cancelled" || kind === "flow_finished";
}

/**
 * Wake-ups between processes over LISTEN/NOTIFY. A dedicated connection
 * listens and reconnects after it is lost; since notifications sent while it
 * was away are gone, a reconnect delivers a `tasks` and a due `timers` event
 * so Workers look at once (polling covers the rest). Outgoing events are
 * coalesced: at most one NOTIFY statement is in flight, carrying every
 * distinct event raised meanwhile. Events are only wake-ups, so a duplicate
 * costs one extra look and a lost one waits for the next poll.
 */
export class WakeChannel {
  /** Tells this store's own notifications apart from other stores'. */
  readonly origin = randomUUID();
  private readonly options: WakeChannelOptions;
  private listener: pg.Client | undefined;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private readonly pending = new Map<string, string>();
  private flushing: Promise<void> | undefined;

  constructor(options: WakeChannelOptions) {
    this.options = options;
  }

  /** Connects and listens; throws when the first connection fails. */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const listener = new pg.Client(this.options.connection);
    listener.on("notification", (message) => this.receive(message.payload));
    listener.on("error", (error) => this.lose(listener, error));
    listener.on("end", () => this.lose(listener, undefined));
    try {
      await listener.connect();
      await listener.query(`LISTEN ${pg.escapeIdentifier(this.options.channel)}`);
    } catch (error) {
      await listener.end().catch(() => undefined);
      throw error;
    }
    // Errors before this point belong to connect(), which threw them; after it, to lose().
    if (this.closed) await listener.end().catch(() => undefined);
    else this.listener = listener;
  }

  private receive(payload: string | undefined): void {
    if (payload === undefined) return;
    let parsed: WakePayload;
    try {
      parsed = JSON.parse(payload) as WakePayload;
    } catch {
      return;
    }
    // Local listeners already heard this store's own events when it raised them.
    if (parsed.origin === this.origin || !isWakeEvent(parsed.event)) return;
    this.options.deliver(parsed.event);
  }

  private lose(listener: pg.Client, error: Error | undefined): void {
    if (this.listener !== listener) return;
    this.listener = undefined;
    listener.removeAllListeners("end");
    void listener.end().catch(() => undefined);
    if (this.closed) return;
    // One log line per outage, not per reconnect attempt.
    if (this.failures === 0) this.options.onError(new Error(`perdure postgres: lost the LISTEN connection; reconnecting (${error?.message ?? "connection ended"})`, { cause: error }));
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const delay = reconnectDelaysMs[Math.min(this.failures, reconnectDelaysMs.length - 1)] ?? 5000;
    this.failures += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.closed) return;
      this.connect().then(() => {
        this.failures = 0;
        this.options.deliver(lookNow);
        this.options.deliver({ kind: "timers", dueAt: 0 });
      }, () => this.scheduleReconnect());
    }, delay);
    this.reconnectTimer.unref();
  }

  /** The NOTIFY channel and payload of `event`, for a statement that sends it itself. */
  payloadOf(event: WakeEvent): { channel: string; payload: string } {
    return { channel: this.options.channel, payload: JSON.stringify({ origin: this.origin, event } satisfies WakePayload) };
  }

  /** Queues an event for other stores listening on the channel. */
  publish(event: WakeEvent): void {
    if (this.closed) return;
    const key = JSON.stringify(event);
    if (!this.pending.has(key)) this.pending.set(key, JSON.stringify({ origin: this.origin, event } satisfies WakePayload));
    if (this.flushing === undefined) this.flushing = this.flush();
  }

  private async flush(): Promise<void> {
    // Let the current turn's events gather into one statement.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.pending.size > 0) {
      const payloads = [...this.pending.values()];
      this.pending.clear();
      try {
        await this.options.notify(this.options.channel, payloads);
      } catch (error) {
        this.options.onError(new Error(`perdure postgres: could not send wake-ups to other processes (they will poll): ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
      }
    }
    this.flushing = undefined;
  }

  /** Sends what is queued, then stops listening. */
  async close(): Promise<void> {
    await this.flushing;
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
  }
}
