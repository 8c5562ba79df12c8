// Data hooks: polled resources and the live AgentEvents stream.
import { useCallback, useEffect, useRef, useState } from "react";
import { agentEventWriteTimesEventName, parseAgentEvent, parseWriteTimes, type AgentEventWire } from "./api.ts";

/** A resource loaded now, again every `intervalMs`, and whenever `refresh` is called. */
export interface PolledResource<T> {
  data: T | undefined;
  error: Error | undefined;
  /** Milliseconds since epoch of the last successful load. */
  loadedAt: number;
  /** Loads again now (calls within `coalesceMs` of each other load once). */
  refresh: () => void;
}

export function usePolledResource<T>(key: string | null, load: (signal: AbortSignal) => Promise<T>, intervalMs: number): PolledResource<T> {
  const [state, setState] = useState<{ key: string | null; data: T | undefined; error: Error | undefined; loadedAt: number }>({ key, data: undefined, error: undefined, loadedAt: 0 });
  const loadRef = useRef(load);
  loadRef.current = load;
  const refreshRef = useRef<() => void>(() => undefined);

  useEffect(() => {
    if (key === null) return;
    let disposed = false;
    let inFlight: AbortController | undefined;
    let timer: number | undefined;
    let queued = false;
    const run = async (): Promise<void> => {
      if (inFlight !== undefined) {
        queued = true;
        return;
      }
      window.clearTimeout(timer);
      const controller = new AbortController();
      inFlight = controller;
      try {
        const data = await loadRef.current(controller.signal);
        if (!disposed) setState({ key, data, error: undefined, loadedAt: Date.now() });
      } catch (error) {
        if (!disposed && !controller.signal.aborted) setState((previous) => ({ ...previous, key, error: error instanceof Error ? error : new Error(String(error)) }));
      } finally {
        inFlight = undefined;
        if (!disposed) {
          if (queued) {
            queued = false;
            void run();
          } else {
            timer = window.setTimeout(() => void run(), intervalMs);
          }
        }
      }
    };
    let debounce: number | undefined;
    refreshRef.current = () => {
      window.clearTimeout(debounce);
      debounce = window.setTimeout(() => void run(), 120);
    };
    void run();
    return () => {
      disposed = true;
      inFlight?.abort();
      window.clearTimeout(timer);
      window.clearTimeout(debounce);
    };
  }, [key, intervalMs]);

  const refresh = useCallback(() => refreshRef.current(), []);
  const current = state.key === key ? state : { data: undefined, error: undefined, loadedAt: 0 };
  return { data: current.data, error: current.error, loadedAt: current.loadedAt, refresh };
}

/** One received event, numbered in arrival order. */
export interface ReceivedEvent extends AgentEventWire {
  seq: number;
  receivedAt: number;
}

export type EventStreamState = "connecting" | "open" | "reconnecting" | "closed";

/**
 * Follows `GET /api/sessions/:id/events` with an EventSource (which resumes
 * from Last-Event-ID by itself). Keeps the newest `limit` events and calls
 * `onEvent` for each.
 */
export function useAgentEvents(url: string | null, onEvent: (event: ReceivedEvent) => void, limit = 800): { events: ReceivedEvent[]; state: EventStreamState; clear: () => void } {
  const [events, setEvents] = useState<ReceivedEvent[]>([]);
  const [state, setStreamState] = useState<EventStreamState>("connecting");
  const onEventRef = useRef(onEvent);
  onEventRef.current = onEvent;

  useEffect(() => {
    setEvents([]);
    if (url === null) return;
    let disposed = false;
    let source: EventSource | undefined;
    let retry: number | undefined;
    let seq = 0;
    let pending: ReceivedEvent[] = [];
    let flush: number | undefined;
    const connect = (): void => {
      setStreamState(seq === 0 ? "connecting" : "reconnecting");
      source = new EventSource(url);
      source.onopen = () => setStreamState("open");
      // When each event was written, by its id: a frame of its own before the events it times.
      const writeTimes = new Map<string, string>();
      source.addEventListener(agentEventWriteTimesEventName, (message: MessageEvent<string>) => {
        for (const [eventId, writtenAt] of parseWriteTimes(message.data)) writeTimes.set(eventId, writtenAt);
      });
      source.onmessage = (message: MessageEvent<string>) => {
        const writtenAt = writeTimes.get(message.lastEventId) ?? null;
        writeTimes.delete(message.lastEventId);
        const parsed = parseAgentEvent(message.data, writtenAt);
        if (parsed === null) return;
        const received: ReceivedEvent = { ...parsed, seq: ++seq, receivedAt: Date.now() };
        onEventRef.current(received);
        pending.push(received);
        // Batch renders: text deltas can arrive hundreds a second.
        flush ??= window.setTimeout(() => {
          flush = undefined;
          const batch = pending;
          pending = [];
          setEvents((previous) => [...previous, ...batch].slice(-limit));
        }, 100);
      };
      source.onerror = () => {
        if (disposed || source === undefined) return;
        if (source.readyState === EventSource.CLOSED) {
          // The server refused (such as a stale position): start again from the current state.
          source.close();
          setStreamState("closed");
          retry = window.setTimeout(connect, 3000);
        } else {
          setStreamState("reconnecting");
        }
      };
    };
    connect();
    return () => {
      disposed = true;
      source?.close();
      window.clearTimeout(retry);
      window.clearTimeout(flush);
    };
  }, [url, limit]);

  const clear = useCallback(() => setEvents([]), []);
  return { events, state, clear };
}

/** The current time, updated every `intervalMs` (for "5s ago" labels and active bars). */
export function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), intervalMs);
    return () => window.clearInterval(timer);
  }, [intervalMs]);
  return now;
}
