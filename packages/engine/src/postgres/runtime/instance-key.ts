/*
 * PostgreSQL text cannot hold U+0000, which a map instance key may contain.
 * Keys are stored with an order-preserving escape: U+0000 becomes U+0001 U+0001
 * and U+0001 becomes U+0001 U+0002. The escapes form a prefix code whose order
 * matches the characters they stand for, so byte ("C") order of stored keys is
 * the order of the keys themselves, and key ranges keep working.
 */

/** The stored form of an instance key. */
export function encodeInstanceKey(key: string): string {
  if (!key.includes("\u0000") && !key.includes("\u0001")) return key;
  return key.replaceAll("\u0001", "\u0001\u0002").replaceAll("\u0000", "\u0001\u0001");
}

/** The instance key a stored key stands for. */
export function decodeInstanceKey(stored: string): string {
  if (!stored.includes("\u0001")) return stored;
  let key = "";
  for (let index = 0; index < stored.length; index++) {
    const character = stored[index];
    if (character === "\u0001") {
      index += 1;
      key += stored[index] === "\u0001" ? "\u0000" : "\u0001";
    } else {
      key += character;
    }
  }
  return key;
}
