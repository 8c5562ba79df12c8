// The chat's queue: messages this tab sends while a turn runs (posted to
// `POST /api/chat`, whose answer the chat does not follow), and "Send now"
// and "Delete" on the session's queued messages.
import { useEffect, useRef, useState } from "react";
import { api, ApiError } from "../../lib/api.ts";

/** A message this tab sent through the queue path, until the session's snapshot shows it. */
export interface LocalQueuedMessage {
  localId: string;
  text: string;
  state: "sending" | "queued" | "failed";
  error?: string;
  /** When it was sent or acknowledged (ms since epoch). */
  at: number;
}

/** What this tab is doing to a queued message, or why it failed. */
export type QueuedMessageAction = { state: "steering" | "deleting" } | { state: "failed"; error: string };

export interface MessageQueue {
  localQueue: LocalQueuedMessage[];
  actions: ReadonlyMap<string, QueuedMessageAction>;
  /** Sends a message into the session's queue while a turn runs. */
  queueMessage: (text: string, planMode: boolean) => Promise<void>;
  steer: (messageId: string) => void;
  remove: (messageId: string) => void;
  dismiss: (localId: string) => void;
}

function failureText(failure: unknown, verb: string): string {
  // 409: the session took the message (it started a turn) while the request ran.
  if (failure instanceof ApiError && failure.status === 409) return `could not ${verb} it: the session took it meanwhile`;
  return failure instanceof Error ? failure.message : String(failure);
}

export function useMessageQueue(sessionId: string, queuedIds: readonly string[], loadedAt: number, onActivity: () => void): MessageQueue {
  const queuePosts = useRef(new Set<AbortController>());
  const [localQueue, setLocalQueue] = useState<LocalQueuedMessage[]>([]);
  const [actions, setActions] = useState<ReadonlyMap<string, QueuedMessageAction>>(new Map());

  // Local queue entries leave once a snapshot read after their acknowledgement shows the session's queue.
  useEffect(() => {
    setLocalQueue((queue) => {
      const next = queue.filter((entry) => entry.state !== "queued" || entry.at > loadedAt - 250);
      return next.length === queue.length ? queue : next;
    });
  }, [loadedAt]);

  // Actions on messages that are no longer queued are over.
  const queuedKey = queuedIds.join("\n");
  useEffect(() => {
    const queued = new Set(queuedKey === "" ? [] : queuedKey.split("\n"));
    setActions((current) => {
      const next = new Map([...current].filter(([messageId]) => queued.has(messageId)));
      return next.size === current.size ? current : next;
    });
  }, [queuedKey]);

  useEffect(() => {
    const posts = queuePosts.current;
    return () => posts.forEach((controller) => controller.abort());
  }, []);

  const setAction = (messageId: string, action: QueuedMessageAction): void => setActions((current) => new Map(current).set(messageId, action));

  const queueMessage = async (text: string, planMode: boolean): Promise<void> => {
    const localId = `queued-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    setLocalQueue((queue) => [...queue, { localId, text, state: "sending", at: Date.now() }]);
    const controller = new AbortController();
    queuePosts.current.add(controller);
    try {
      const response = await fetch("/api/chat", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: sessionId, messages: [{ id: localId, role: "user", parts: [{ type: "text", text }] }], ...(planMode ? { planMode: true } : {}) }),
        signal: controller.signal,
      });
      if (!response.ok) {
        const body = (await response.json().catch(() => ({}))) as { error?: string };
        throw new Error(body.error ?? `${response.status} ${response.statusText}`);
      }
      setLocalQueue((queue) => queue.map((entry) => (entry.localId === localId ? { ...entry, state: "queued", at: Date.now() } : entry)));
      onActivity();
      // The answer streams the turn this message starts; the chat follows that turn through the session instead.
      await response.body?.cancel();
    } catch (failure) {
      if (controller.signal.aborted) return;
      const message = failure instanceof Error ? failure.message : String(failure);
      setLocalQueue((queue) => queue.map((entry) => (entry.localId === localId ? { ...entry, state: "failed", error: message } : entry)));
    } finally {
      queuePosts.current.delete(controller);
    }
  };

  const steer = (messageId: string): void => {
    setAction(messageId, { state: "steering" });
    api.steer(sessionId, { messageId }).then(
      ({ steered }) => {
        if (!steered) setAction(messageId, { state: "failed", error: "the session did not take it: it is no longer queued, or this turn cannot be steered" });
        onActivity();
      },
      (failure: unknown) => {
        setAction(messageId, { state: "failed", error: failureText(failure, "send") });
        onActivity();
      },
    );
  };

  const remove = (messageId: string): void => {
    setAction(messageId, { state: "deleting" });
    api.deleteQueued(sessionId, messageId).then(
      () => onActivity(),
      (failure: unknown) => {
        setAction(messageId, { state: "failed", error: failureText(failure, "delete") });
        onActivity();
      },
    );
  };

  const dismiss = (localId: string): void => setLocalQueue((queue) => queue.filter((entry) => entry.localId !== localId));

  return { localQueue, actions, queueMessage, steer, remove, dismiss };
}
