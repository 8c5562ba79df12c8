/** The AttributeMap key of a per-turn record: the turn's number, 12 digits zero-padded, so keys sort in turn order. */
export function turnRecordKey(turnNumber: number): string {
  if (!Number.isSafeInteger(turnNumber) || turnNumber < 0 || turnNumber > 999_999_999_999) {
    throw new RangeError(`turn number ${String(turnNumber)} is invalid: use an integer from 0 to 999999999999`);
  }
  return String(turnNumber).padStart(12, "0");
}

/** The number of `turn-<n>`, or undefined for any other text. */
export function turnNumberOfId(turnId: string): number | undefined {
  const match = /^turn-([1-9][0-9]{0,11})$/.exec(turnId);
  return match === null ? undefined : Number(match[1]);
}
