/**
 * Shortening text for a terminal line or an error message: the cut ends with
 * an ellipsis, at a word boundary when one is near, so a reader can tell the
 * text goes on.
 */

/**
 * `text` when it fits in `maxCharacters`, else its start (cut after the last
 * space in the final fifth, when there is one) and "…", `maxCharacters` in all.
 *
 * @example
 * truncateText("the model provider refused the request", 20); // "the model provider…"
 */
export function truncateText(text: string, maxCharacters: number): string {
  if (text.length <= maxCharacters) return text;
  const room = Math.max(0, maxCharacters - 1);
  const cut = text.slice(0, room);
  const lastSpace = cut.lastIndexOf(" ");
  const start = lastSpace >= room * 0.8 ? cut.slice(0, lastSpace) : cut;
  return `${start.trimEnd()}…`;
}
