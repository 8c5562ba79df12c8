/** One schema change, applied once, in order, inside the migration transaction. */
export interface Migration {
  /** Ordered, unique and never renamed: it is recorded in `schema_migrations`. */
  name: string;
  /** SQL with `{schema}` standing for the quoted schema name. */
  sql: string;
}
