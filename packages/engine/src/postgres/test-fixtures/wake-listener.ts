/**
 * A connection that listens on a test schema's wake channel, as a Worker of
 * another process would, and keeps what it hears: each NOTIFY's event kind,
 * with its Flow ID when it has one ("tasks", "stream order-1").
 */
import pg from "pg";
import type { TemporaryPostgresSchema } from "../temporary-postgres-schema.ts";

export interface WakeListener {
  readonly heard: string[];
  end: () => Promise<void>;
}

export async function listenForWakes(temporary: TemporaryPostgresSchema): Promise<WakeListener> {
  const listener = new pg.Client({ connectionString: temporary.connectionString });
  await listener.connect();
  const heard: string[] = [];
  listener.on("notification", (message) => {
    const { event } = JSON.parse(message.payload ?? "{}") as { event?: { kind?: string; flowId?: string } };
    heard.push(`${event?.kind} ${event?.flowId ?? ""}`.trim());
  });
  await listener.query(`LISTEN ${pg.escapeIdentifier(`perdure_wake_${temporary.schema}`)}`);
  return { heard, end: () => listener.end() };
}
