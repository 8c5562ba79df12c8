import type { PoolClient } from "pg";
import type { StreamAppend } from "../../store/step-commit.ts";
import type { StreamRow } from "../../store/store.ts";
import { firstStreamTrimBatchRows, nextStreamTrimBatchRows } from "../../stream/stream-trim-batch.ts";

/**
 * A batch of one Flow's Stream messages as the batch functions' array
 * parameters take them (`perdure_append_streams`, `perdure_heartbeat_streams`,
 * `perdure_write_streams`): streams, values, UTF-8 sizes, write times and
 * budgets. Throws for a batch of more than one Flow.
 */
export function streamBatchColumns(flowId: string, batch: readonly StreamAppend[]): unknown[] {
  const flowType = batch[0]?.flowType;
  if (batch.some((append) => append.flowId !== flowId || append.flowType !== flowType)) {
    throw new Error(`a Stream batch holds one Flow's messages; it had ${flowId} and others`);
  }
  return [
    batch.map((append) => append.stream), batch.map((append) => append.value), batch.map((append) => Buffer.byteLength(append.value)),
    batch.map((append) => append.writtenAt), batch.map((append) => append.capacityBytes),
  ];
}

/**
 * Appends a Stream message and trims the Flow type's oldest messages beyond
 * the byte budget, as the SQLite store does. The head row serializes writers
 * of one Flow's Stream (so indexes have no gaps); the usage row serializes
 * trimming per Flow type and Stream, so the byte count stays exact.
 */
export async function appendStream(client: PoolClient, schema: string, append: StreamAppend): Promise<number> {
  const { flowId, flowType, stream, value, writtenAt, capacityBytes } = append;
  const head = await client.query<{ lastIndex: number }>(
    `INSERT INTO ${schema}.stream_heads AS h (flow_id, stream, last_index) VALUES ($1, $2, 1)
     ON CONFLICT (flow_id, stream) DO UPDATE SET last_index = h.last_index + 1 RETURNING last_index AS "lastIndex"`,
    [flowId, stream],
  );
  const index = head.rows[0]?.lastIndex ?? 1;
  const bytes = Buffer.byteLength(value);
  await client.query(
    `INSERT INTO ${schema}.stream_messages (flow_id, flow_type, stream, idx, value, bytes, written_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [flowId, flowType, stream, index, value, bytes, writtenAt],
  );
  const usage = await client.query<{ bytes: number }>(
    `INSERT INTO ${schema}.stream_usage AS u (flow_type, stream, bytes) VALUES ($1, $2, $3)
     ON CONFLICT (flow_type, stream) DO UPDATE SET bytes = u.bytes + excluded.bytes RETURNING bytes`,
    [flowType, stream, bytes],
  );
  let total = usage.rows[0]?.bytes ?? bytes;
  let batchRows = firstStreamTrimBatchRows;
  while (total > capacityBytes) {
    const oldest = await client.query<{ id: number; bytes: number }>(
      `SELECT id, bytes FROM ${schema}.stream_messages WHERE flow_type = $1 AND stream = $2 ORDER BY id LIMIT $3`,
      [flowType, stream, batchRows],
    );
    batchRows = nextStreamTrimBatchRows(batchRows);
    if (oldest.rows.length === 0) break;
    const doomed: number[] = [];
    let trimmedBytes = 0;
    for (const row of oldest.rows) {
      if (total - trimmedBytes <= capacityBytes) break;
      trimmedBytes += row.bytes;
      doomed.push(row.id);
    }
    // Count what was really deleted, so the usage row never drifts from the messages.
    const deleted = await client.query<{ bytes: number }>(
      `DELETE FROM ${schema}.stream_messages WHERE flow_type = $1 AND stream = $2 AND id = ANY($3::bigint[]) RETURNING bytes`,
      [flowType, stream, doomed],
    );
    const deletedBytes = deleted.rows.reduce((sum, row) => sum + row.bytes, 0);
    await client.query(`UPDATE ${schema}.stream_usage SET bytes = bytes - $1 WHERE flow_type = $2 AND stream = $3`, [deletedBytes, flowType, stream]);
    total -= deletedBytes;
    if (deletedBytes === 0) break;
  }
  return index;
}

/**
 * Messages after `afterIndex` with the oldest retained and the last written
 * index, read in one statement so the three agree (a write landing between
 * separate reads could make a reader think messages were lost).
 */
export async function readStream(
  client: PoolClient,
  schema: string,
  flowId: string,
  stream: string,
  afterIndex: number,
  limit: number,
): Promise<{ rows: StreamRow[]; firstIndex: number | undefined; lastIndex: number }> {
  const result = await client.query<{ lastIndex: number | null; firstIndex: number | null; index: number | null; value: string | null; writtenAt: number | null }>(
    `WITH first AS (SELECT MIN(idx) AS first_index FROM ${schema}.stream_messages WHERE flow_id = $1 AND stream = $2),
       head AS (SELECT last_index FROM ${schema}.stream_heads WHERE flow_id = $1 AND stream = $2),
       page AS (SELECT idx, value, written_at FROM ${schema}.stream_messages WHERE flow_id = $1 AND stream = $2 AND idx > $3 ORDER BY idx LIMIT $4)
     SELECT head.last_index AS "lastIndex", first.first_index AS "firstIndex", page.idx AS "index", page.value, page.written_at AS "writtenAt"
     FROM first LEFT JOIN head ON true LEFT JOIN page ON true ORDER BY page.idx`,
    [flowId, stream, afterIndex, limit],
  );
  const [summary] = result.rows;
  const rows: StreamRow[] = [];
  for (const row of result.rows) {
    if (row.index !== null && row.value !== null && row.writtenAt !== null) rows.push({ index: row.index, value: row.value, writtenAt: row.writtenAt });
  }
  return { rows, firstIndex: summary?.firstIndex ?? undefined, lastIndex: summary?.lastIndex ?? 0 };
}

/** The newest `limit` messages, oldest first. */
export async function recentStream(client: PoolClient, schema: string, flowId: string, stream: string, limit: number): Promise<StreamRow[]> {
  const result = await client.query<StreamRow>(
    `SELECT * FROM (SELECT idx AS "index", value, written_at AS "writtenAt" FROM ${schema}.stream_messages
       WHERE flow_id = $1 AND stream = $2 ORDER BY idx DESC LIMIT $3) recent ORDER BY "index"`,
    [flowId, stream, limit],
  );
  return result.rows;
}
