import { type Codec, defaultCodec } from "../internal/codec.ts";
import { validateName } from "../internal/validate-name.ts";
import { InvalidDefinitionError } from "../errors/invalid-definition-error.ts";

/** Best-effort, resumable live output of a Flow instance. */
export interface StreamDefinition<TValue> {
  readonly kind: "stream";
  readonly name: string;
  readonly codec: Codec<TValue>;
  /** Byte budget shared by every instance of the Flow type; oldest messages are trimmed first. */
  readonly capacityBytes: number;
}

/** Options of {@link stream}. */
export interface StreamOptions<TValue> {
  /**
   * Byte budget of this Stream across every instance of the Flow type.
   * @default 10_485_760 (10 MiB)
   */
  capacityBytes?: number;
  /** @default the identity codec */
  codec?: Codec<TValue>;
}

export const defaultStreamCapacityBytes = 10 * 1024 * 1024;

/**
 * Declares a Stream. Steps write to it immediately (not at commit); readers
 * follow it from a resume token.
 *
 * @example
 * const progress = stream<{ percent: number }>("Progress", { capacityBytes: 1_000_000 });
 */
export function stream<TValue>(name: string, options: StreamOptions<TValue> = {}): StreamDefinition<TValue> {
  const capacityBytes = options.capacityBytes ?? defaultStreamCapacityBytes;
  if (!Number.isSafeInteger(capacityBytes) || capacityBytes < 1) {
    throw new InvalidDefinitionError(`Stream ${name} capacityBytes ${String(capacityBytes)} is invalid: use a positive integer`);
  }
  return Object.freeze({
    kind: "stream",
    name: validateName("Stream", name),
    codec: options.codec ?? defaultCodec<TValue>(),
    capacityBytes,
  });
}
