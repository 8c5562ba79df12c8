/**
 * Migration 0012: the commit-side functions plan their statements once.
 * PL/pgSQL re-plans a statement with parameters for its first five calls on a
 * connection and then whenever a custom plan looks cheaper than the generic
 * one; a profile of a 16-session agent workload put a fifth of the functions'
 * time in that planning. Every statement in these functions selects by a
 * primary key or a Flow's own rows, so the generic plan is the right one for
 * any argument: `plan_cache_mode = force_generic_plan` is set on each of them.
 * The claim function keeps the server's default (its candidate scan's plan
 * depends on the arguments; postgres-idle-reads.test.ts guards it).
 * A later migration that replaces one of these functions with CREATE OR
 * REPLACE must repeat the setting (`SET plan_cache_mode = force_generic_plan`
 * in its definition); migrations.test.ts checks that it is in place.
 * docs/decisions/2026-12-07-commit-functions-generic-plans.md
 */
import type { Migration } from "./migration.ts";

/** The functions set to generic plans, with their argument types (as ALTER FUNCTION names them). */
export const genericPlanFunctions: readonly string[] = [
  "perdure_commit_step(jsonb, jsonb)",
  "perdure_commit_steps(jsonb, jsonb)",
  "perdure_start_flow(jsonb, jsonb)",
  "perdure_match_wait(text, text, jsonb, bigint, bigint)",
  "perdure_match_wait(text, text, jsonb, bigint, bigint, bigint, bigint)",
  "perdure_take_messages(text, jsonb, text[])",
  "perdure_append_stream(text, text, text, text, bigint, bigint, bigint, text, text)",
];

export const commitFunctionsGenericPlansMigration: Migration = {
  name: "0012_commit_functions_generic_plans",
  sql: genericPlanFunctions.map((signature) => `ALTER FUNCTION {schema}.${signature} SET plan_cache_mode = force_generic_plan;`).join("\n"),
};
