// A dropped connection: reconnect with the latest resume token, backing off
// up to 15 s, and at once when the browser comes back online.
import { useEffect, useRef, useState } from "react";

/**
 * Calls `reconnect` after 1, 2, 4 … 15 s while `disconnected`; returns the
 * wait before the next try (ms), or null while connected.
 */
export function useReconnectBackoff(disconnected: boolean, error: unknown, reconnect: () => void): number | null {
  const retries = useRef(0);
  const [retryIn, setRetryIn] = useState<number | null>(null);
  useEffect(() => {
    if (!disconnected) {
      retries.current = 0;
      setRetryIn(null);
      return;
    }
    const delay = Math.min(15_000, 1000 * 2 ** retries.current);
    setRetryIn(delay);
    const timer = window.setTimeout(() => {
      retries.current += 1;
      reconnect();
    }, delay);
    const online = (): void => {
      window.clearTimeout(timer);
      reconnect();
    };
    window.addEventListener("online", online);
    return () => {
      window.clearTimeout(timer);
      window.removeEventListener("online", online);
    };
  }, [disconnected, error, reconnect]);
  return retryIn;
}
