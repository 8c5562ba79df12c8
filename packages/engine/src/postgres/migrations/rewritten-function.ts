/**
 * A later migration that changes a function an earlier, frozen migration
 * created builds its definition from that migration's text, so it cannot
 * drift from what shipped: the definition runs from `header` to the end of
 * its body, and each replacement must find its text exactly once. Anything
 * not as expected throws when the migration's module loads.
 */
export interface FunctionRewrite {
  /** The migration that rewrites, for errors ("migration 0017"). */
  migration: string;
  /** What the earlier definition is, for errors ("0011's perdure_commit_step"). */
  source: string;
  /** The earlier migration's SQL. */
  sql: string;
  /** The definition's first line(s), as the earlier migration wrote them. */
  header: string;
  replacements: readonly { what: string; find: string; replace: string }[];
}

/** The earlier definition with every replacement made. */
export function rewrittenFunction(rewrite: FunctionRewrite): string {
  const start = rewrite.sql.indexOf(rewrite.header);
  const end = rewrite.sql.indexOf("$function$;", start);
  if (start < 0 || end < 0) throw new Error(`${rewrite.migration}: ${rewrite.source} was not found`);
  let definition = rewrite.sql.slice(start, end + "$function$;".length);
  for (const { what, find, replace } of rewrite.replacements) {
    if (definition.split(find).length !== 2) throw new Error(`${rewrite.migration}: ${what} was not found exactly once`);
    definition = definition.replace(find, () => replace);
  }
  return definition;
}
