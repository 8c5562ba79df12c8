/**
 * Reads a provider's `retry-after` from a failed AI SDK call, so the next
 * `RunModel` attempt waits as long as the provider asked.
 */
import { APICallError } from "ai";
import { RetryAfterError } from "@perdure/engine";

/**
 * The wait a provider asked for, in milliseconds: `retry-after-ms` (OpenAI
 * sends it), else `retry-after` as seconds or as an HTTP date. `undefined`
 * when the error is not an HTTP error or names no usable wait.
 */
export function retryAfterMsOf(error: unknown, now = Date.now()): number | undefined {
  if (!APICallError.isInstance(error)) return undefined;
  const headers = lowerCaseKeys(error.responseHeaders ?? {});
  const milliseconds = Number(headers["retry-after-ms"]);
  if (headers["retry-after-ms"] !== undefined && Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const retryAfter = headers["retry-after"]?.trim();
  if (retryAfter === undefined || retryAfter === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(retryAfter)) return Number(retryAfter) * 1000;
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The error a failed model call throws: a `RetryAfterError` carrying the
 * provider's wait when it named one, so the engine's retry policy waits at
 * least that long (never beyond the policy's maximum interval); the error
 * itself otherwise.
 */
export function withProviderRetryAfter(error: unknown): unknown {
  const retryAfterMs = retryAfterMsOf(error);
  if (retryAfterMs === undefined) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new RetryAfterError(`${message} (the provider asked to retry after ${retryAfterMs} ms)`, { retryAfterMs, cause: error });
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
