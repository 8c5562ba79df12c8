import type { SQLInputValue } from "node:sqlite";
import { firstStreamTrimBatchRows, nextStreamTrimBatchRows } from "../stream/stream-trim-batch.ts";
import type { StreamAppend } from "../store/step-commit.ts";
import { limitParameter, textParameter } from "./sqlite-statements.ts";

/** The synchronous statements an append runs, on whichever connection holds the write lock. */
export interface SqliteStatementRunner {
  all(sql: string, parameters: SQLInputValue[]): unknown[];
  get(sql: string, parameters: SQLInputValue[]): unknown;
  run(sql: string, parameters: SQLInputValue[]): number;
}

// The head and the count are updated first and inserted only when missing (a Flow's first message of the
// Stream, a Flow type's first message), as PostgreSQL's migration 0016 does: nearly every write updates.
const moveHeadSql = "UPDATE stream_heads SET last_index = last_index + ? WHERE flow_id = ? AND stream = ? RETURNING last_index AS lastIndex";
const insertHeadSql = "INSERT INTO stream_heads (flow_id, stream, last_index) VALUES (?, ?, ?)";
const messageSql = "INSERT INTO stream_messages (flow_id, flow_type, stream, idx, value, bytes, written_at) VALUES (?, ?, ?, ?, ?, ?, ?)";
const countSql = "UPDATE stream_usage SET bytes = bytes + ? WHERE flow_type = ? AND stream = ? RETURNING bytes";
const insertCountSql = "INSERT INTO stream_usage (flow_type, stream, bytes) VALUES (?, ?, ?)";
const oldestSql = `SELECT id, bytes FROM stream_messages WHERE flow_type = ${textParameter} AND stream = ${textParameter} ORDER BY id LIMIT ${limitParameter}`;
const trimSql = "DELETE FROM stream_messages WHERE flow_type = ? AND stream = ? AND id <= ?";
const uncountSql = "UPDATE stream_usage SET bytes = bytes - ? WHERE flow_type = ? AND stream = ?";

/** Appends one Stream message inside the caller's transaction (see {@link appendStreamRows}); returns its index. */
export function appendStreamRow(statements: SqliteStatementRunner, append: StreamAppend): number {
  return appendStreamRows(statements, [append])[0]!;
}

/**
 * Appends a batch of Stream messages inside the caller's transaction, in the
 * batch's order, and returns their indexes. It writes by runs: a run is the
 * batch's consecutive messages of one Flow's Stream with one capacity (a
 * batch is sorted by Stream name, so usually one run per Stream). Per run
 * the Stream's head moves once by the run's length, each message takes its
 * index, the Flow type's byte count grows once by the run's UTF-8 size, and
 * the oldest messages of the Flow type's Stream go until the count fits the
 * budget. Trimming once after the run deletes the same oldest messages as
 * trimming after each of its messages: the count only grows within a run.
 */
export function appendStreamRows(statements: SqliteStatementRunner, batch: readonly StreamAppend[]): number[] {
  const indexes: number[] = [];
  let first = 0;
  while (first < batch.length) {
    const { flowId, flowType, stream, capacityBytes } = batch[first]!;
    let end = first + 1;
    while (end < batch.length && sameRun(batch[end]!, flowId, flowType, stream, capacityBytes)) end += 1;
    const length = end - first;
    const bytes: number[] = [];
    let runBytes = 0;
    for (let position = first; position < end; position += 1) {
      const messageBytes = Buffer.byteLength(batch[position]!.value);
      bytes.push(messageBytes);
      runBytes += messageBytes;
    }
    const head = statements.get(moveHeadSql, [length, flowId, stream]) as { lastIndex: number } | undefined;
    if (head === undefined) statements.run(insertHeadSql, [flowId, stream, length]);
    const lastIndex = head?.lastIndex ?? length;
    for (let position = first; position < end; position += 1) {
      const { value, writtenAt } = batch[position]!;
      const index = lastIndex - end + position + 1;
      statements.run(messageSql, [flowId, flowType, stream, index, value, bytes[position - first]!, writtenAt]);
      indexes.push(index);
    }
    const usage = statements.get(countSql, [runBytes, flowType, stream]) as { bytes: number } | undefined;
    if (usage === undefined) statements.run(insertCountSql, [flowType, stream, runBytes]);
    trimToCapacity(statements, flowType, stream, capacityBytes, usage?.bytes ?? runBytes);
    first = end;
  }
  return indexes;
}

function sameRun(append: StreamAppend, flowId: string, flowType: string, stream: string, capacityBytes: number): boolean {
  return append.flowId === flowId && append.flowType === flowType && append.stream === stream && append.capacityBytes === capacityBytes;
}

/** Deletes the oldest messages of the Flow type's Stream until `total`, its byte count, fits `capacityBytes`. */
function trimToCapacity(statements: SqliteStatementRunner, flowType: string, stream: string, capacityBytes: number, total: number): void {
  let batchRows = firstStreamTrimBatchRows;
  while (total > capacityBytes) {
    const oldest = statements.all(oldestSql, [flowType, stream, batchRows]) as { id: number; bytes: number }[];
    batchRows = nextStreamTrimBatchRows(batchRows);
    if (oldest.length === 0) break;
    let trimmedBytes = 0;
    let lastId = 0;
    for (const row of oldest) {
      if (total - trimmedBytes <= capacityBytes) break;
      trimmedBytes += row.bytes;
      lastId = row.id;
    }
    statements.run(trimSql, [flowType, stream, lastId]);
    statements.run(uncountSql, [trimmedBytes, flowType, stream]);
    total -= trimmedBytes;
  }
}
