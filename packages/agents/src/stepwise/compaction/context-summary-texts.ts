/**
 * The texts of Stepwise compaction, written once: the note that starts a
 * compacted model input, the summary call's instructions and prompt, and the
 * note a summary request carries when older messages did not fit.
 */

/** The first line of the user text that carries the summary at the start of a compacted model input. */
export const contextSummaryNoteHeader = "[Perdure] Summary of the earlier conversation:";

/** The instructions of a summary call, which offers no tools. */
export const contextSummaryInstructions = [
  "You write the summary of a conversation between a user and an AI assistant that uses tools,",
  "so that the assistant can continue it from the summary alone.",
  "Keep what the user wants and asked for, the decisions made, the facts the tools returned (names, IDs, numbers, dates),",
  "what was done, and what is still open or was promised.",
  "Fold an earlier summary, when there is one, into the new one.",
  "Write plain text, at most a few paragraphs. Do not call tools and do not answer the user.",
].join(" ");

/** The user text that ends a summary call's input and asks for the summary. */
export const contextSummaryPrompt = "[Perdure] Write the summary of the conversation above now.";

/**
 * The note at the start of a summary request that left out the oldest
 * `omittedCount` messages because the request would not fit the context window.
 *
 * @example
 * buildContextSummaryOmissionNote(3);
 * // "[Perdure] 3 earlier messages were left out of this summary because they did not fit in the context window."
 * buildContextSummaryOmissionNote(1);
 * // "[Perdure] 1 earlier message was left out of this summary because it did not fit in the context window."
 */
export function buildContextSummaryOmissionNote(omittedCount: number): string {
  if (!Number.isSafeInteger(omittedCount) || omittedCount < 1) {
    throw new RangeError(`omittedCount ${String(omittedCount)} is invalid: use a positive integer`);
  }
  const subject = omittedCount === 1 ? "1 earlier message was" : `${omittedCount} earlier messages were`;
  const pronoun = omittedCount === 1 ? "it" : "they";
  return `[Perdure] ${subject} left out of this summary because ${pronoun} did not fit in the context window.`;
}

/** The user text that carries a summary: the header line, then the summary. */
export function contextSummaryNoteText(summary: string): string {
  return `${contextSummaryNoteHeader}\n${summary}`;
}
