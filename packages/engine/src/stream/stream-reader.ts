import type { Store } from "../store/store.ts";
import { decodeValue } from "../internal/encode.ts";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import { decodeResumeToken, encodeResumeToken } from "./resume-token.ts";
import type { StreamDefinition } from "./stream.ts";

/** One Stream message with the token to resume after it. */
export interface StreamMessage<TValue> {
  readonly value: TValue;
  /** Position of this message; pass it as `after` to read what follows. */
  readonly token: string;
  /** 1 for the Flow's first message on this Stream; no gaps. */
  readonly index: number;
  readonly writtenAt: Date;
}

/** What one read returns. */
export interface StreamReadResult<TValue> {
  readonly messages: StreamMessage<TValue>[];
  /** Token to continue after the last message returned (or the one passed in when none). */
  readonly nextToken: string | undefined;
  /** True when messages after the given position were trimmed away before they could be read. */
  readonly lost: boolean;
}

/** Options of `client.readStream`. */
export interface ReadStreamOptions {
  /** Resume token; read from the oldest retained message when absent. */
  after?: string;
  /** @default 100 */
  limit?: number;
  /** When nothing is there yet, wait this long for a message. @default 0 */
  waitMs?: number;
  signal?: AbortSignal;
}

/** Reads Stream messages of one Flow after a position, optionally waiting for new ones. */
export async function readStream<TValue>(store: Store, flowId: string, ref: StreamDefinition<TValue>, options: ReadStreamOptions): Promise<StreamReadResult<TValue>> {
  const limit = options.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) throw new InvalidInputError(`Stream read limit ${String(options.limit)} is invalid: use an integer from 1 to 10000`);
  const secret = await store.tokenSecret();
  const afterIndex = options.after === undefined ? 0 : decodeResumeToken(secret, options.after, { flowId, stream: ref.name });
  // A local wait: the monotonic clock, which no wall-clock jump moves.
  const deadline = performance.now() + (options.waitMs ?? 0);
  for (;;) {
    const read = await store.transaction((transaction) => transaction.readStream(flowId, ref.name, afterIndex, limit));
    if (read.rows.length > 0 || performance.now() >= deadline || options.signal?.aborted === true) {
      const lost = read.firstIndex === undefined ? read.lastIndex > afterIndex : read.firstIndex > afterIndex + 1;
      const messages = read.rows.map((row) => ({
        value: decodeValue(ref.codec, row.value),
        token: encodeResumeToken(secret, { flowId, stream: ref.name, index: row.index }),
        index: row.index,
        writtenAt: new Date(row.writtenAt),
      }));
      return { messages, nextToken: messages.at(-1)?.token ?? options.after, lost };
    }
    await waitForStream(store, flowId, ref.name, Math.min(deadline - performance.now(), store.pollIntervalMs), options.signal);
  }
}

/** Resolves on a local write to this Stream, after `timeoutMs`, or on abort. */
function waitForStream(store: Store, flowId: string, stream: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const finish = (): void => {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener("abort", finish);
      resolve();
    };
    const timer = setTimeout(finish, Math.max(0, timeoutMs));
    const unsubscribe = store.subscribe((event) => {
      if (event.kind === "stream" && event.flowId === flowId && event.stream === stream) finish();
    });
    signal?.addEventListener("abort", finish, { once: true });
  });
}

/** The newest `limit` messages, oldest first. */
export async function listRecentStreamMessages<TValue>(store: Store, flowId: string, ref: StreamDefinition<TValue>, limit: number): Promise<StreamMessage<TValue>[]> {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) throw new InvalidInputError(`Stream list limit ${String(limit)} is invalid: use an integer from 1 to 10000`);
  const secret = await store.tokenSecret();
  const rows = await store.transaction((transaction) => transaction.recentStream(flowId, ref.name, limit));
  return rows.map((row) => ({
    value: decodeValue(ref.codec, row.value),
    token: encodeResumeToken(secret, { flowId, stream: ref.name, index: row.index }),
    index: row.index,
    writtenAt: new Date(row.writtenAt),
  }));
}
