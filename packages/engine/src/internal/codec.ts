/**
 * Turns a typed value into JSON-compatible data and back. The default codec
 * passes values through unchanged, so they must already be plain JSON.
 */
export interface Codec<TValue> {
  encode(value: TValue): unknown;
  decode(data: unknown): TValue;
}

export const jsonCodec: Codec<never> = {
  encode: (value) => value,
  decode: (data) => data as never,
};

/** Returns the identity codec typed for `TValue`. */
export function defaultCodec<TValue>(): Codec<TValue> {
  return jsonCodec as unknown as Codec<TValue>;
}
