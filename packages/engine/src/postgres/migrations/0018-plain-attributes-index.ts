/**
 * Migration 0018: an index of each Flow's plain Attributes (key '').
 *
 * Every claim returns the claimed Flow's plain Attributes
 * (`a.flow_id = … AND a.key = ''`). So do a handover's reply, a read
 * selection and the general path. The primary key leads with `(flow_id,
 * name)`, so that read walked every Attribute row of the Flow, keyed ones
 * included: Map entries and, in an agent session, a tool record, a turn
 * checkpoint and the message window's rows for every turn. The cost of a
 * claim grew with the session's length, 168 µs at 4,000 keyed rows against
 * 9 µs with this index.
 *
 * The index holds only plain rows. A keyed row's insert never touches it.
 * Updating a plain value keeps HOT updates, because the value is not
 * indexed and the indexed columns never change.
 */
import type { Migration } from "./migration.ts";

export const plainAttributesIndexMigration: Migration = {
  name: "0018_plain_attributes_index",
  sql: `
CREATE INDEX attributes_plain ON {schema}.attributes (flow_id, name) WHERE key = '';
`,
};
