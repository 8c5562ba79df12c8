/** How many of a Stream's oldest messages a store reads per pass when it trims to the byte budget. */

/**
 * Rows read by the first trimming pass. Once a Stream is at its budget, an
 * append usually pushes out one or two messages of about its own size, so a
 * small first read keeps a full Stream's appends as cheap as an empty one's.
 */
export const firstStreamTrimBatchRows = 4;

const maxStreamTrimBatchRows = 256;

/** The next pass's rows: four times the last, up to 256, for a large message that pushes out many small ones. */
export function nextStreamTrimBatchRows(previousRows: number): number {
  return Math.min(previousRows * 4, maxStreamTrimBatchRows);
}
