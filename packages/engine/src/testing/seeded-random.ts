/** A tiny seeded random number generator (mulberry32), so a failing fault schedule can be replayed from its seed. */

/**
 * Returns a function that yields numbers in [0, 1), the same sequence for the
 * same 32-bit seed. Not for anything secret.
 *
 * @example
 * const random = seededRandom(42);
 * const coin = random() < 0.5;
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}
