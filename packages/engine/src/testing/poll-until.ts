/** Options of {@link pollUntil}. */
export interface PollUntilOptions {
  /** Generous, so a test on a loaded machine fails only when the state never comes. @default 30_000 */
  timeoutMs?: number;
  /** @default 10 */
  intervalMs?: number;
  /** Included in the timeout error. */
  description?: string;
}

/**
 * Calls `probe` until it returns something other than `undefined`, `null` or
 * `false`, and returns that; throws when the deadline passes.
 *
 * @example
 * const done = await pollUntil(async () => (await client.describe(id)).status === "completed");
 */
export async function pollUntil<TValue>(probe: () => Promise<TValue | undefined | null | false> | TValue | undefined | null | false, options: PollUntilOptions = {}): Promise<TValue> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      throw new Error(`pollUntil timed out after ${timeoutMs} ms${options.description === undefined ? "" : ` waiting for ${options.description}`}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 10));
  }
}
