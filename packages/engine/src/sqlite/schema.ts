/** The SQLite schema. Every table leads with the flow ID (timers and streams have extra indexes for their scans). */
export const sqliteSchema = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS flows (
  flow_id TEXT PRIMARY KEY,
  flow_type TEXT NOT NULL,
  status TEXT NOT NULL,
  input TEXT NOT NULL,
  output TEXT,
  error TEXT,
  request_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  next_seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS flows_by_type ON flows (flow_type, status, flow_id);
CREATE TABLE IF NOT EXISTS attributes (
  flow_id TEXT NOT NULL,
  name TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (flow_id, name, key)
) WITHOUT ROWID;
-- Plain Attributes (key '') are read on every claim; without this index that read walks every map instance of the Flow.
CREATE INDEX IF NOT EXISTS attributes_plain ON attributes (flow_id, name) WHERE key = '';
CREATE TABLE IF NOT EXISTS messages (
  flow_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  channel TEXT NOT NULL,
  key TEXT NOT NULL,
  message_id TEXT NOT NULL,
  value TEXT NOT NULL,
  published_at INTEGER NOT NULL,
  PRIMARY KEY (flow_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS messages_by_channel ON messages (flow_id, channel, key, seq);
CREATE UNIQUE INDEX IF NOT EXISTS messages_by_id ON messages (flow_id, message_id);
CREATE TABLE IF NOT EXISTS executions (
  flow_id TEXT NOT NULL,
  execution_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  flow_type TEXT NOT NULL,
  step_type TEXT NOT NULL,
  input TEXT NOT NULL,
  status TEXT NOT NULL,
  claimed_by TEXT,
  lease_token INTEGER NOT NULL,
  lease_expires_at INTEGER,
  deadline_at INTEGER,
  available_at INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  execute_claims INTEGER NOT NULL,
  scheduled_at INTEGER NOT NULL,
  expires_at INTEGER,
  conditions TEXT,
  wait_result TEXT,
  checkpoint TEXT,
  movement_options TEXT,
  recovery_error TEXT,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (flow_id, execution_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS executions_queued ON executions (available_at, flow_type) WHERE claimed_by IS NULL AND status IN ('asking', 'ready');
CREATE INDEX IF NOT EXISTS executions_by_status ON executions (flow_id, status, seq);
CREATE INDEX IF NOT EXISTS executions_claimed ON executions (claimed_by) WHERE claimed_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS executions_expiring ON executions (expires_at) WHERE claimed_by IS NULL AND expires_at IS NOT NULL AND status IN ('asking', 'ready');
CREATE TABLE IF NOT EXISTS locks (
  flow_id TEXT NOT NULL,
  name TEXT NOT NULL,
  execution_id TEXT NOT NULL,
  PRIMARY KEY (flow_id, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS timers (
  flow_id TEXT NOT NULL,
  flow_type TEXT NOT NULL,
  execution_id TEXT NOT NULL,
  timer_id TEXT NOT NULL,
  due_at INTEGER NOT NULL,
  fired INTEGER NOT NULL,
  PRIMARY KEY (flow_id, execution_id, timer_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS timers_due ON timers (due_at, flow_type) WHERE fired = 0;
CREATE INDEX IF NOT EXISTS timers_by_id ON timers (flow_id, timer_id);
CREATE TABLE IF NOT EXISTS history (
  flow_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  execution_id TEXT NOT NULL,
  step_type TEXT NOT NULL,
  method TEXT NOT NULL,
  status TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL,
  outcome TEXT,
  error TEXT,
  PRIMARY KEY (flow_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS workers (worker_id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS stream_heads (
  flow_id TEXT NOT NULL,
  stream TEXT NOT NULL,
  last_index INTEGER NOT NULL,
  PRIMARY KEY (flow_id, stream)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS stream_messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  flow_id TEXT NOT NULL,
  flow_type TEXT NOT NULL,
  stream TEXT NOT NULL,
  idx INTEGER NOT NULL,
  value TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  written_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS stream_messages_by_flow ON stream_messages (flow_id, stream, idx);
CREATE INDEX IF NOT EXISTS stream_messages_by_type ON stream_messages (flow_type, stream, id);
CREATE TABLE IF NOT EXISTS stream_usage (
  flow_type TEXT NOT NULL,
  stream TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (flow_type, stream)
) WITHOUT ROWID;
`;
