import { existsSync, readFileSync } from "node:fs";
import type { DurableBoundaryTraceEntry } from "../internal/durable-boundary.ts";

/**
 * The boundaries a process wrote to its trace file
 * (`PERDURE_BOUNDARY_TRACE`), in the order it reached them; empty when the
 * file does not exist. A last line without its newline was cut by a kill
 * mid-write and is left out.
 *
 * @example
 * const reached = readBoundaryTrace(tracePath);
 * const killedAt = reached.find((entry) => entry.action === "kill");
 */
export function readBoundaryTrace(path: string): DurableBoundaryTraceEntry[] {
  if (!existsSync(path)) return [];
  const lines = readFileSync(path, "utf8").split("\n");
  return lines.slice(0, -1).filter((line) => line !== "").map((line) => JSON.parse(line) as DurableBoundaryTraceEntry);
}
