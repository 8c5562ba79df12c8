/** The seeded choices a session program is generated from (mulberry32), so a seed always makes the same program. */

/** Seeded choices: numbers, integers in a range, picks, coin flips. */
export interface ProgramRandom {
  /** A number in [0, 1). */
  next(): number;
  /** An integer from `low` to `high`, both included. */
  integer(low: number, high: number): number;
  /** True with probability `probability`. */
  chance(probability: number): boolean;
  /** One of `choices`, each equally likely. */
  pick<TChoice>(choices: readonly TChoice[]): TChoice;
}

/**
 * The choices of one 32-bit seed; the same seed gives the same sequence.
 *
 * @example
 * const random = programRandom(7);
 * const turns = random.integer(1, 3);
 */
export function programRandom(seed: number): ProgramRandom {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    integer: (low, high) => low + Math.floor(next() * (high - low + 1)),
    chance: (probability) => next() < probability,
    pick: (choices) => {
      if (choices.length === 0) throw new RangeError("programRandom.pick needs at least one choice");
      return choices[Math.floor(next() * choices.length)]!;
    },
  };
}
