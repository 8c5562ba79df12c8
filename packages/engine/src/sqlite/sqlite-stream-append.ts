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

const headSql = `INSERT INTO stream_heads (flow_id, stream, last_index) VALUES (?, ?, 1)
  ON CONFLICT (flow_id, stream) DO UPDATE SET last_index = last_index + 1 RETURNING last_index AS lastIndex`;
const messageSql = "INSERT INTO stream_messages (flow_id, flow_type, stream, idx, value, bytes, written_at) VALUES (?, ?, ?, ?, ?, ?, ?)";
const usageSql = `INSERT INTO stream_usage (flow_type, stream, bytes) VALUES (?, ?, ?)
  ON CONFLICT (flow_type, stream) DO UPDATE SET bytes = bytes + excluded.bytes RETURNING bytes`;
const oldestSql = `SELECT id, bytes FROM stream_messages WHERE flow_type = ${textParameter} AND stream = ${textParameter} ORDER BY id LIMIT ${limitParameter}`;
const trimSql = "DELETE FROM stream_messages WHERE flow_type = ? AND stream = ? AND id <= ?";
const uncountSql = "UPDATE stream_usage SET bytes = bytes - ? WHERE flow_type = ? AND stream = ?";

/**
 * Appends one Stream message inside the caller's transaction: the Stream's
 * head moves by one, the message takes that index, the Flow type's byte
 * count grows by its UTF-8 size, and the oldest messages of the Flow type's
 * Stream go until the count fits the budget. Returns the message's index.
 */
export function appendStreamRow(statements: SqliteStatementRunner, append: StreamAppend): number {
  const { flowId, flowType, stream, value, writtenAt, capacityBytes } = append;
  const head = statements.get(headSql, [flowId, stream]) as { lastIndex: number } | undefined;
  const index = head?.lastIndex ?? 1;
  const bytes = Buffer.byteLength(value);
  statements.run(messageSql, [flowId, flowType, stream, index, value, bytes, writtenAt]);
  const usage = statements.get(usageSql, [flowType, stream, bytes]) as { bytes: number } | undefined;
  let total = usage?.bytes ?? bytes;
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
  return index;
}
